package memcached

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/strata-cache/strata/tiers/memcached/compat"
)

// A compat pool (Config.Compat) picks each key's server with a
// compat.Layout over the configured list instead of the shard map. The
// shard map is still built and still names each key's shard: the load
// counters, sampling and RehashOnDown's fallback work by shard, and only
// the choice of the server changes. The layout is rebuilt with the list
// (New, SetServers) and lives in the route, so a request sees the layout
// and the servers of one list.
//
// A Managed compat pool serves by the layout until the control plane
// publishes a map; from then on the map says which shards the layout
// still places (shardmap.Map.OnLayout) and converts the others to itself
// by moves from the layout (shardmap.FromLayout), whose source is, per
// key, the server the layout names (move.go). The layout is the
// configured list's, so every proxy of a converting tier must list the
// same servers in the same order, as a compat pool already must.

// ErrNoLayout is why a pool without a compat layout refuses a map that
// places shards by one.
var ErrNoLayout = errors.New("memcached: the map converts from a compat layout, and the pool has none")

// compatFields maps the fields compat.New names onto Config's.
var compatFields = map[string]string{
	"Scheme": "Compat", "Distribution": "Distribution", "Hash": "Hash",
	"HashTag": "HashTag", "Seed": "CompatSeed", "Servers": "Servers",
}

// compatLayout builds the layout of c over list, or returns nil when c has
// no Compat. Its error is a *FieldError naming the Config field at fault.
func (c *Config) compatLayout(list []Server) (*compat.Layout, error) {
	if c.Compat == "" {
		return nil, nil
	}
	return buildLayout(compat.Spec{Scheme: c.Compat, Distribution: c.Distribution, Hash: c.Hash,
		HashTag: c.HashTag, Seed: c.CompatSeed}, list, "")
}

// buildLayout builds the layout of spec over list. Its error is a
// *FieldError naming the Config field at fault, after prefix (the struct
// holding the settings: "" for Config's own, "ConvertFrom.").
func buildLayout(spec compat.Spec, list []Server, prefix string) (*compat.Layout, error) {
	servers := make([]compat.Server, len(list))
	for i, s := range list {
		host, port, err := net.SplitHostPort(s.Addr)
		if err != nil {
			return nil, &FieldError{Field: prefix + "Servers", Err: fmt.Errorf("server %q: want host:port", s.Addr)}
		}
		p, _ := strconv.Atoi(port)
		servers[i] = compat.Server{Host: host, Port: p, Weight: max(s.Weight, 1), Name: s.Name}
	}
	l, err := compat.New(spec, servers)
	var se *compat.SpecError
	if errors.As(err, &se) {
		return nil, &FieldError{Field: prefix + compatFields[se.Field], Err: se.Err}
	}
	return l, err
}

// compatErrors reports the compat settings of c that New would refuse.
func (c Config) compatErrors() []error {
	refuse := func(field string, err error) error { return &FieldError{Field: field, Err: err} }
	if c.Compat == "" {
		var errs []error
		for _, f := range []struct {
			field string
			set   bool
		}{
			{"Distribution", c.Distribution != ""}, {"Hash", c.Hash != ""},
			{"HashTag", c.HashTag != ""}, {"CompatSeed", c.CompatSeed != 0},
		} {
			if f.set {
				errs = append(errs, refuse(f.field, errors.New("only a compat layout has it: set compat")))
			}
		}
		if c.ConvertFrom != nil {
			errs = append(errs, refuse("ConvertFrom", errors.New("converts to a compat layout: set compat")))
		}
		for _, s := range c.Servers {
			if s.Name != "" {
				errs = append(errs, refuse("Servers", fmt.Errorf("server %s: a name needs compat = \"twemproxy\"", s.Addr)))
				break
			}
		}
		return errs
	}
	var errs []error
	if _, err := checkServers(c.Servers); err == nil {
		if _, err := c.compatLayout(c.Servers); err != nil {
			errs = append(errs, err)
		}
	}
	return append(errs, c.priorErrors()...)
}

// ParseServer reads a server as configuration files write it:
// "host:port", "host:port:weight" or "host:port:weight name" (twemproxy's
// form; a name is only accepted by a twemproxy compat pool, which Validate
// judges, as it judges the weight's range).
func ParseServer(s string) (Server, error) {
	addr, name, _ := strings.Cut(strings.TrimSpace(s), " ")
	sv := Server{Addr: addr, Weight: 1, Name: strings.TrimSpace(name)}
	if _, _, err := net.SplitHostPort(addr); err == nil {
		if sv.Name != "" {
			return Server{}, fmt.Errorf("server %q: a name follows a weight: host:port:weight name", s)
		}
		return sv, CheckAddress(addr)
	}
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return Server{}, fmt.Errorf("server %q: want host:port[:weight [name]]", s)
	}
	w, err := strconv.Atoi(addr[i+1:])
	if err != nil {
		return Server{}, fmt.Errorf("server %q: weight %q is not a number", s, addr[i+1:])
	}
	sv.Addr, sv.Weight = addr[:i], w
	return sv, CheckAddress(sv.Addr)
}
