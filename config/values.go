package config

import (
	"errors"
	"fmt"

	"github.com/strata-cache/strata/tiers/memcached"
)

// ServerEntry is one memcached server of a pool: either "host:port" or an
// inline table {addr = "host:port", weight = 2}.
type ServerEntry struct {
	Addr   string `json:"addr"`
	Weight int    `json:"weight"`
	Name   string `json:"name,omitempty"`
}

// UnmarshalTOML reads either form. Keys of the inline table are checked
// here, because the decoder counts everything below a custom unmarshaler
// as decoded.
func (s *ServerEntry) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string: // "host:port[:weight [name]]"
		sv, err := memcached.ParseServer(x)
		*s = ServerEntry{Addr: sv.Addr, Weight: sv.Weight, Name: sv.Name}
		if err != nil {
			return err
		}
	case map[string]any:
		*s = ServerEntry{Weight: 1}
		for k, val := range x {
			switch k {
			case "addr":
				a, ok := val.(string)
				if !ok {
					return fmt.Errorf("addr must be a string \"host:port\", not %T", val)
				}
				s.Addr = a
			case "weight":
				w, ok := val.(int64)
				if !ok {
					return fmt.Errorf("weight must be an integer, not %T", val)
				}
				s.Weight = int(w) // the pool's Validate judges it
			default:
				return fmt.Errorf("unknown key %q in a server entry (want addr and weight)", k)
			}
		}
		if s.Addr == "" {
			return errors.New("a server entry needs addr = \"host:port\"")
		}
	default:
		return fmt.Errorf("a server is \"host:port\" or {addr = \"host:port\", weight = N}, not %T", v)
	}
	return checkHostPort(s.Addr)
}

// checkHostPort is the pool's rule for a server's address; [control]
// etcd endpoints are dialled the same way.
func checkHostPort(addr string) error { return memcached.CheckAddress(addr) }
