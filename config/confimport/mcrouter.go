package confimport

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/strata-cache/strata/tiers/memcached"
	"github.com/strata-cache/strata/tiers/memcached/compat"
)

// Mcrouter translates an mcrouter JSON configuration (read from file) whose
// route leads every key to one pool, hashed with Ch3 (mcrouter's default)
// or Crc32: PoolRoute, HashRoute, PrefixSelectorRoute whose every branch
// leads to that pool, and FailoverRoute, whose first child is the pool.
// Anything else is an error naming the route's JSON path ($.route…): a
// strata tier is one pool, so a route that splits keys over several pools,
// or writes one pool and reads another, has no translation.
func Mcrouter(file string, data []byte) (string, error) {
	var root any
	if err := json.Unmarshal(stripComments(data), &root); err != nil {
		return "", &Error{File: file, Line: jsonLine(data, err), Key: "(json)", Msg: err.Error()}
	}
	m := &mcr{file: file}
	obj, ok := root.(map[string]any)
	if !ok {
		return "", m.errAt("$", "want an object with pools and route")
	}
	if _, ok := obj["macros"]; ok {
		return "", m.errAt("$.macros", "macros are not expanded: import the configuration mcrouter prints with --config-dump")
	}
	pools, ok := obj["pools"].(map[string]any)
	if !ok {
		return "", m.errAt("$.pools", "want an object of pools")
	}
	m.pools = pools
	var route any
	var at string
	switch {
	case obj["route"] != nil:
		route, at = obj["route"], "$.route"
	case obj["routes"] != nil:
		rs, ok := obj["routes"].([]any)
		if !ok || len(rs) != 1 {
			return "", m.errAt("$.routes", "one route for every key is translated; several aliases with their own routes are not")
		}
		r, _ := rs[0].(map[string]any)
		route, at = r["route"], "$.routes[0].route"
	default:
		return "", m.errAt("$", "no route")
	}
	if err := m.walk(route, at, ""); err != nil {
		return "", err
	}
	return m.write()
}

// mcr is one translation under way.
type mcr struct {
	file     string
	pools    map[string]any
	pool     string // the one pool every key reaches
	poolAt   string
	hash     string // "ch3" or "crc32"
	servers  []memcached.Server
	comments []string
}

func (m *mcr) errAt(path, format string, a ...any) error {
	return &Error{File: m.file, Key: path, Msg: fmt.Sprintf(format, a...)}
}

// walk follows a route to its pool; hash is the hash a HashRoute above it
// set ("" for the default).
func (m *mcr) walk(r any, at, hash string) error {
	switch v := r.(type) {
	case string:
		typ, arg, _ := strings.Cut(v, "|")
		switch typ {
		case "PoolRoute", "Pool":
			return m.reach(arg, at, hash)
		}
		return m.errAt(at, "route %q is not translated (PoolRoute, HashRoute, PrefixSelectorRoute and FailoverRoute are)", v)
	case map[string]any:
		typ, _ := v["type"].(string)
		switch typ {
		case "PoolRoute", "HashRoute":
			h, err := m.hashOf(v, at)
			if err != nil {
				return err
			}
			if h == "" {
				h = hash
			}
			if typ == "HashRoute" {
				return m.walk(v["children"], at+".children", h)
			}
			switch p := v["pool"].(type) {
			case string:
				return m.reach(p, at, h)
			case map[string]any:
				name, _ := p["name"].(string)
				if name == "" {
					return m.errAt(at+".pool", "an inline pool needs a name")
				}
				m.pools[name] = p
				return m.reach(name, at+".pool", h)
			}
			return m.errAt(at+".pool", "want a pool name")
		case "PrefixSelectorRoute":
			var paths []string
			if w, ok := v["wildcard"]; ok {
				if err := m.walk(w, at+".wildcard", hash); err != nil {
					return err
				}
			}
			if pol, ok := v["policies"].(map[string]any); ok {
				for k := range pol {
					paths = append(paths, k)
				}
				sort.Strings(paths)
				for _, k := range paths {
					if err := m.walk(pol[k], at+".policies."+k, hash); err != nil {
						return err
					}
				}
			}
			if m.pool == "" {
				return m.errAt(at, "no wildcard and no policies")
			}
			m.comments = append(m.comments, fmt.Sprintf("# %s: every prefix leads to pool %q, so one tier serves them all", at, m.pool))
			return nil
		case "FailoverRoute":
			ch, ok := v["children"].([]any)
			if !ok || len(ch) == 0 {
				return m.errAt(at+".children", "want a list of routes")
			}
			m.comments = append(m.comments, fmt.Sprintf("# %s: FailoverRoute: keys are served by its first child; on an error mcrouter\n# tried the other %d, strata answers the error (rehash_on_down moves a down\n# server's keys within the pool instead)", at, len(ch)-1))
			return m.walk(ch[0], at+".children[0]", hash)
		}
		return m.errAt(at, "route type %q is not translated (PoolRoute, HashRoute, PrefixSelectorRoute and FailoverRoute are)", typ)
	case []any:
		if len(v) == 1 {
			return m.walk(v[0], at+"[0]", hash)
		}
		return m.errAt(at, "a list of %d routes sends each key to all of them: not translated", len(v))
	}
	return m.errAt(at, "want a route")
}

// hashOf reads a route's hash setting: "hash": "Ch3" or {"hash_func": …}.
func (m *mcr) hashOf(v map[string]any, at string) (string, error) {
	var h any = v["hash_func"]
	switch x := v["hash"].(type) {
	case string:
		h = x
	case map[string]any:
		h = x["hash_func"]
		for k := range x {
			if k != "hash_func" {
				return "", m.errAt(at+".hash."+k, "not translated: it changes which part of the key is hashed or how")
			}
		}
	}
	if h == nil {
		return "", nil
	}
	s, _ := h.(string)
	switch strings.ToLower(s) {
	case "ch3":
		return "ch3", nil
	case "crc32":
		return "crc32", nil
	}
	return "", m.errAt(at+".hash", "hash function %v is not translated (Ch3 or Crc32)", h)
}

// reach records that the route leads to pool with hash; every route must
// lead to the same pool the same way.
func (m *mcr) reach(pool, at, hash string) error {
	if hash == "" {
		hash = "ch3" // mcrouter's default
	}
	if m.pool != "" {
		if pool != m.pool || hash != m.hash {
			return m.errAt(at, "leads to pool %q (%s), but %s leads to %q (%s): a strata tier is one pool", pool, hash, m.poolAt, m.pool, m.hash)
		}
		return nil
	}
	p, ok := m.pools[pool].(map[string]any)
	if !ok {
		return m.errAt(at, "no pool %q in $.pools", pool)
	}
	list, ok := p["servers"].([]any)
	if !ok || len(list) == 0 {
		return m.errAt("$.pools."+pool+".servers", "want a list of \"host:port\"")
	}
	for i, e := range list {
		s, _ := e.(string)
		fields := strings.Split(s, ":")
		if strings.HasPrefix(s, "[") { // [v6]:port[:…]
			end := strings.Index(s, "]:")
			if end < 0 {
				return m.errAt(fmt.Sprintf("$.pools.%s.servers[%d]", pool, i), "%q: want host:port", s)
			}
			fields = append([]string{s[:end+1]}, strings.Split(s[end+2:], ":")...)
		}
		if len(fields) < 2 || slices.ContainsFunc(fields[2:], func(f string) bool { return f != "ascii" && f != "plain" }) {
			return m.errAt(fmt.Sprintf("$.pools.%s.servers[%d]", pool, i), "%q: want host:port (the ascii protocol)", s)
		}
		addr := fields[0] + ":" + fields[1]
		if err := memcached.CheckAddress(addr); err != nil {
			return m.errAt(fmt.Sprintf("$.pools.%s.servers[%d]", pool, i), "%v", err)
		}
		m.servers = append(m.servers, memcached.Server{Addr: addr, Weight: 1})
	}
	m.pool, m.poolAt, m.hash = pool, at, hash
	return nil
}

func (m *mcr) write() (string, error) {
	scheme := compat.McrouterCh3
	if m.hash == "crc32" {
		scheme = compat.McrouterCRC32
	}
	cfg := memcached.DefaultConfig()
	cfg.Servers, cfg.Compat = m.servers, scheme
	if err := cfg.Validate(); err != nil {
		return "", m.errAt("$.pools."+m.pool, "%v", err)
	}
	var out strings.Builder
	fmt.Fprintf(&out, "# strata configuration imported from mcrouter's %s.\n", m.file)
	fmt.Fprintf(&out, "# It serves the same keys from the same servers: compat = %q places\n# every key where mcrouter's %s hash over pool %q does (%s).\n", scheme, m.hash, m.pool, m.poolAt)
	out.WriteString("# mcrouter's listen port is a command-line flag: set [server] listen.\n\n")
	out.WriteString("# mcrouter's route is one tier: no L1 until you add one.\n[l1]\nkind = \"none\"\n\n[l2]\n")
	fmt.Fprintf(&out, "# servers: $.pools.%s.servers, in mcrouter's order\nservers = [\n", m.pool)
	for _, s := range m.servers {
		fmt.Fprintf(&out, "  %s,\n", tomlString(s.Addr))
	}
	fmt.Fprintf(&out, "]\ncompat = %s\n", strconv.Quote(scheme))
	for _, c := range m.comments {
		out.WriteString(c + "\n")
	}
	return out.String(), nil
}

// stripComments blanks mcrouter's // and /* */ comments outside strings,
// keeping every newline so that line numbers stay true.
func stripComments(data []byte) []byte {
	out := slices.Clone(data)
	inStr := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inStr:
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			j := i
			for ; j < len(out) && !(out[j] == '*' && j+1 < len(out) && out[j+1] == '/' && j > i+1); j++ {
				if out[j] != '\n' {
					out[j] = ' '
				}
			}
			for k := j; k < min(j+2, len(out)); k++ {
				out[k] = ' '
			}
			i = j + 1
		}
	}
	return out
}

// jsonLine is the line of a JSON syntax error's offset, or 0.
func jsonLine(data []byte, err error) int {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	off := int64(-1)
	switch {
	case asErr(err, &se):
		off = se.Offset
	case asErr(err, &te):
		off = te.Offset
	}
	if off < 0 || off > int64(len(data)) {
		return 0
	}
	return 1 + strings.Count(string(data[:off]), "\n")
}
