package confimport

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/strata-cache/strata/tiers/memcached"
	"github.com/strata-cache/strata/tiers/memcached/compat"
)

// Error is a refused part of the input file, at a line.
type Error struct {
	File string
	Line int    // 1-based; 0 when no line applies (a JSON path names the place)
	Key  string // the YAML key at fault, e.g. "alpha.distribution"
	Msg  string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s: %s", e.File, e.Key, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Key, e.Msg)
}

// twemproxy's defaults, where strata's differ or a comment names them.
const (
	twemDefaultHash         = "fnv1a_64"
	twemDefaultDistribution = "ketama"
	twemDefaultFailureLimit = 2
	twemDefaultRetryMS      = 30000
)

// Twemproxy translates the nutcracker configuration data (read from file,
// which only names it in errors and comments) for the pool named pool, or
// the file's only pool when pool is empty.
func Twemproxy(file string, data []byte, pool string) (string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return "", yamlError(file, err)
	}
	if len(doc.Content) == 0 {
		return "", &Error{File: file, Key: "(file)", Msg: "no pool: the file is empty"}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode || len(root.Content) == 0 {
		return "", &Error{File: file, Line: root.Line, Key: "(file)", Msg: "want a mapping of pool names to pools"}
	}
	var names []string
	var body *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		names = append(names, root.Content[i].Value)
		if root.Content[i].Value == pool || pool == "" && len(root.Content) == 2 {
			body, pool = root.Content[i+1], root.Content[i].Value
		}
	}
	if body == nil {
		return "", &Error{File: file, Line: root.Line, Key: "(file)",
			Msg: fmt.Sprintf("name the pool to import: one of %s", strings.Join(names, ", "))}
	}
	t := &twem{file: file, pool: pool}
	return t.translate(body)
}

// twem is one pool's translation under way.
type twem struct {
	file, pool string
	keys       map[string]*yaml.Node // the pool's keys, by name
	line       map[string]int
}

func (t *twem) errAt(key string, format string, a ...any) error {
	return &Error{File: t.file, Line: t.line[key], Key: t.pool + "." + key, Msg: fmt.Sprintf(format, a...)}
}

// from is the comment naming where a value came from.
func (t *twem) from(key string) string {
	if n, ok := t.keys[key]; ok {
		return fmt.Sprintf("%s: %s (%s:%d)", key, n.Value, t.file, n.Line)
	}
	return key + " not set"
}

func (t *twem) scalar(key string) (string, bool, error) {
	n, ok := t.keys[key]
	if !ok {
		return "", false, nil
	}
	if n.Kind != yaml.ScalarNode {
		return "", false, t.errAt(key, "want a single value")
	}
	return n.Value, true, nil
}

func (t *twem) integer(key string) (int, bool, error) {
	v, ok, err := t.scalar(key)
	if !ok || err != nil {
		return 0, ok, err
	}
	i, err := strconv.Atoi(v)
	if err != nil {
		return 0, false, t.errAt(key, "%q is not an integer", v)
	}
	return i, true, nil
}

func (t *twem) boolean(key string) (bool, bool, error) {
	v, ok, err := t.scalar(key)
	if !ok || err != nil {
		return false, ok, err
	}
	switch v {
	case "true":
		return true, true, nil
	case "false":
		return false, true, nil
	}
	return false, false, t.errAt(key, "%q is not true or false", v)
}

// translated keys, and the keys twemproxy has that strata does not need.
var (
	twemKnown   = []string{"listen", "hash", "hash_tag", "distribution", "timeout", "auto_eject_hosts", "server_retry_timeout", "server_failure_limit", "servers", "redis"}
	twemIgnored = map[string]string{
		"backlog":            "strata sizes its listen backlog itself",
		"preconnect":         "strata connects on demand and keeps connections",
		"server_connections": "strata opens one connection per event loop and server",
		"client_connections": "strata bounds clients with its own limits",
		"tcpkeepalive":       "not configurable in strata",
		"redis_auth":         "strata serves memcached only",
		"redis_db":           "strata serves memcached only",
	}
)

func (t *twem) translate(body *yaml.Node) (string, error) {
	if body.Kind != yaml.MappingNode {
		return "", &Error{File: t.file, Line: body.Line, Key: t.pool, Msg: "want a mapping of settings"}
	}
	t.keys, t.line = map[string]*yaml.Node{}, map[string]int{}
	var ignored []string
	for i := 0; i+1 < len(body.Content); i += 2 {
		k := body.Content[i].Value
		t.keys[k], t.line[k] = body.Content[i+1], body.Content[i].Line
		if why, ok := twemIgnored[k]; ok {
			ignored = append(ignored, fmt.Sprintf("# not carried over: %s: %s (%s:%d): %s",
				k, body.Content[i+1].Value, t.file, body.Content[i].Line, why))
		} else if !slices.Contains(twemKnown, k) {
			return "", t.errAt(k, "unknown twemproxy setting")
		}
	}
	if redis, _, err := t.boolean("redis"); err != nil {
		return "", err
	} else if redis {
		return "", t.errAt("redis", "a redis pool cannot be served: strata speaks memcached")
	}
	listen, ok, err := t.scalar("listen")
	if err != nil {
		return "", err
	}
	if !ok {
		return "", &Error{File: t.file, Line: t.keysLine(), Key: t.pool + ".listen", Msg: "missing: twemproxy requires it too"}
	}
	if err := memcached.CheckAddress(listen); err != nil {
		return "", t.errAt("listen", "%v (strata listens on TCP host:port)", err)
	}
	cfg := memcached.DefaultConfig()
	cfg.Compat = compat.Twemproxy
	hash, _, err := t.scalar("hash")
	if err != nil {
		return "", err
	}
	dist, _, err := t.scalar("distribution")
	if err != nil {
		return "", err
	}
	tag, _, err := t.scalar("hash_tag")
	if err != nil {
		return "", err
	}
	cfg.Hash, cfg.Distribution, cfg.HashTag = hash, dist, tag
	servers, err := t.servers()
	if err != nil {
		return "", err
	}
	cfg.Servers = servers
	var out strings.Builder
	fmt.Fprintf(&out, "# strata configuration imported from twemproxy pool %q of %s.\n", t.pool, t.file)
	out.WriteString("# It serves the same keys from the same servers: compat = \"twemproxy\"\n")
	out.WriteString("# places every key on the server nutcracker picks.\n\n")
	fmt.Fprintf(&out, "[server]\nlisten = %s # %s\n\n", tomlString(listen), t.from("listen"))
	out.WriteString("# twemproxy has one tier: no L1 until you add one.\n[l1]\nkind = \"none\"\n\n[l2]\n")
	fmt.Fprintf(&out, "# servers: in twemproxy's order, \"host:port:weight [name]\" (%s:%d)\nservers = [\n", t.file, t.line["servers"])
	for _, s := range servers {
		v := s.Addr + ":" + strconv.Itoa(s.Weight)
		if s.Name != "" {
			v += " " + s.Name
		}
		fmt.Fprintf(&out, "  %s,\n", tomlString(v))
	}
	out.WriteString("]\ncompat = \"twemproxy\"\n")
	fmt.Fprintf(&out, "hash = %s # %s\n", tomlString(cmpOr(hash, twemDefaultHash)), t.fromOrDefault("hash", twemDefaultHash))
	fmt.Fprintf(&out, "distribution = %s # %s\n", tomlString(cmpOr(dist, twemDefaultDistribution)), t.fromOrDefault("distribution", twemDefaultDistribution))
	if tag != "" {
		fmt.Fprintf(&out, "hash_tag = %s # %s\n", tomlString(tag), t.from("hash_tag"))
	}
	if err := t.failure(&out, &cfg); err != nil {
		return "", err
	}
	for _, l := range ignored {
		out.WriteString(l + "\n")
	}
	if err := cfg.Validate(); err != nil {
		return "", t.fieldError(err)
	}
	return out.String(), nil
}

// keysLine is the line of the pool's first key, for errors about a
// missing one.
func (t *twem) keysLine() int {
	first := 0
	for _, l := range t.line {
		if first == 0 || l < first {
			first = l
		}
	}
	return first
}

func (t *twem) fromOrDefault(key, def string) string {
	if _, ok := t.keys[key]; ok {
		return t.from(key)
	}
	return key + " not set: twemproxy's default " + def
}

func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// servers reads the server list: "host:port:weight [name]" each.
func (t *twem) servers() ([]memcached.Server, error) {
	n, ok := t.keys["servers"]
	if !ok {
		return nil, &Error{File: t.file, Line: t.keysLine(), Key: t.pool + ".servers", Msg: "missing: a pool needs servers"}
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, t.errAt("servers", "want a list of \"host:port:weight [name]\"")
	}
	var out []memcached.Server
	for i, e := range n.Content {
		key := fmt.Sprintf("%s.servers[%d]", t.pool, i)
		bad := func(format string, a ...any) error {
			return &Error{File: t.file, Line: e.Line, Key: key, Msg: fmt.Sprintf(format, a...)}
		}
		if e.Kind != yaml.ScalarNode {
			return nil, bad("want \"host:port:weight [name]\"")
		}
		if strings.HasPrefix(e.Value, "/") {
			return nil, bad("%q is a Unix socket: strata's pools dial TCP host:port", e.Value)
		}
		s, err := memcached.ParseServer(e.Value)
		if err != nil {
			return nil, bad("%v", err)
		}
		if s.Weight < 1 || s.Weight > memcached.MaxWeight {
			return nil, bad("weight %d is out of range: 1 to %d", s.Weight, memcached.MaxWeight)
		}
		out = append(out, s)
	}
	return out, nil
}

// failure maps twemproxy's timeout and ejection settings onto strata's.
func (t *twem) failure(out *strings.Builder, cfg *memcached.Config) error {
	if ms, ok, err := t.integer("timeout"); err != nil {
		return err
	} else if ok {
		d := time.Duration(ms) * time.Millisecond
		if d < time.Millisecond || d > memcached.MaxRequestTimeout {
			return t.errAt("timeout", "%d ms is out of strata's range: 1 to %d", ms, memcached.MaxRequestTimeout.Milliseconds())
		}
		cfg.RequestTimeout = d
		fmt.Fprintf(out, "timeout = %q # %s, in milliseconds\n", d.String(), t.from("timeout"))
	} else {
		fmt.Fprintf(out, "# timeout not set: twemproxy waits forever; strata's default %v applies\n", memcached.DefaultRequestTimeout)
	}
	eject, _, err := t.boolean("auto_eject_hosts")
	if err != nil {
		return err
	}
	limit, limitSet, err := t.integer("server_failure_limit")
	if err != nil {
		return err
	}
	if !limitSet {
		limit = twemDefaultFailureLimit
	}
	if limit < 1 || limit > memcached.MaxFailureThreshold {
		return t.errAt("server_failure_limit", "%d is out of range: 1 to %d", limit, memcached.MaxFailureThreshold)
	}
	retry, retrySet, err := t.integer("server_retry_timeout")
	if err != nil {
		return err
	}
	if !retrySet {
		retry = twemDefaultRetryMS
	}
	rd := time.Duration(retry) * time.Millisecond
	if rd < time.Millisecond || rd > memcached.MaxProbeInterval {
		return t.errAt("server_retry_timeout", "%d ms is out of range: 1 to %d", retry, memcached.MaxProbeInterval.Milliseconds())
	}
	cfg.FailureThreshold, cfg.ProbeInterval, cfg.RehashOnDown = limit, rd, eject
	fmt.Fprintf(out, "failure_threshold = %d # %s\n", limit, t.fromOrDefault("server_failure_limit", strconv.Itoa(twemDefaultFailureLimit)))
	fmt.Fprintf(out, "probe_interval = %q # %s, in milliseconds: how often a down server is tried again\n", rd.String(), t.fromOrDefault("server_retry_timeout", strconv.Itoa(twemDefaultRetryMS)))
	if eject {
		fmt.Fprintf(out, "rehash_on_down = true # %s: a down server's keys go to the others\n", t.from("auto_eject_hosts"))
		out.WriteString("# (twemproxy moves them to the next server on its ring, strata to its\n# own choice of an up server: both miss once and refill, neither reads a\n# stale copy, since rehash_on_down flushes a server that returns)\n")
	} else {
		fmt.Fprintf(out, "rehash_on_down = false # %s: a down server's keys fail until it returns\n", t.fromOrDefault("auto_eject_hosts", "false"))
	}
	return nil
}

// fieldError places a refusal of memcached.Config on the YAML key it came
// from.
func (t *twem) fieldError(err error) error {
	var fe *memcached.FieldError
	if !errors.As(err, &fe) {
		return &Error{File: t.file, Line: t.keysLine(), Key: t.pool, Msg: err.Error()}
	}
	key := map[string]string{"Hash": "hash", "Distribution": "distribution", "HashTag": "hash_tag",
		"Servers": "servers", "RequestTimeout": "timeout", "FailureThreshold": "server_failure_limit",
		"ProbeInterval": "server_retry_timeout"}[fe.Field]
	if key == "" {
		key = fe.Field
	}
	return t.errAt(key, "%v", fe.Err)
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// yamlError places a YAML syntax error on its line.
func yamlError(file string, err error) error {
	line := 0
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = yamlLine.ReplaceAllString(msg, "")
	return &Error{File: file, Line: line, Key: "(yaml)", Msg: strings.TrimLeft(msg, ": ")}
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func asErr[T error](err error, target *T) bool { return errors.As(err, target) }
