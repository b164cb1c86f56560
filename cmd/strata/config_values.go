package main

import (
	"errors"
	"fmt"
	"net"
	"strconv"
)

// serverEntry is one memcached server of a pool: either "host:port" or an
// inline table {addr = "host:port", weight = 2}.
type serverEntry struct {
	Addr   string `json:"addr"`
	Weight int    `json:"weight"`
}

// UnmarshalTOML reads either form. Keys of the inline table are checked
// here, because the decoder counts everything below a custom unmarshaler
// as decoded.
func (s *serverEntry) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		*s = serverEntry{Addr: x, Weight: 1}
	case map[string]any:
		*s = serverEntry{Weight: 1}
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

func checkHostPort(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("server %q: want host:port", addr)
	}
	if host == "" {
		return fmt.Errorf("server %q: empty host", addr)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("server %q: port must be between 1 and 65535", addr)
	}
	return nil
}
