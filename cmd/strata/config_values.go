package main

import (
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/strata-cache/strata/control/admin"
)

// byteSize is a size in bytes, written "64MiB", "1GiB", "512KiB", "100MB"
// or a plain number of bytes. Binary units (KiB, MiB, GiB, TiB) are powers
// of 1024, SI units (kB, MB, GB, TB) powers of 1000; units are
// case-insensitive.
type byteSize int64

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	// Longest suffixes first, so "MiB" is not read as "B".
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"b", 1},
}

func parseSize(s string) (byteSize, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New(`empty size: want e.g. "64MiB"`)
	}
	lower := strings.ToLower(t)
	mult := int64(1)
	num := lower
	for _, u := range sizeUnits {
		if strings.HasSuffix(lower, u.suffix) {
			mult = u.mult
			num = strings.TrimSpace(lower[:len(lower)-len(u.suffix)])
			break
		}
	}
	if num == "" {
		return 0, fmt.Errorf("size %q has no number", s)
	}
	if strings.ContainsAny(num, ".eE") {
		f, err := strconv.ParseFloat(num, 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return 0, fmt.Errorf("size %q: want a number and a unit such as \"64MiB\"", s)
		}
		v := f * float64(mult)
		if v > math.MaxInt64 || v != math.Trunc(v) {
			return 0, fmt.Errorf("size %q is not a whole number of bytes", s)
		}
		return byteSize(v), nil
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size %q: want a number and a unit such as \"64MiB\"", s)
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return byteSize(n * mult), nil
}

// UnmarshalText reads a size from the configuration file.
func (b *byteSize) UnmarshalText(text []byte) error {
	v, err := parseSize(string(text))
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// String spells b with the largest binary unit that divides it.
func (b byteSize) String() string {
	n := int64(b)
	for _, u := range []struct {
		s string
		m int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.m == 0 {
			return strconv.FormatInt(n/u.m, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// MarshalText writes b the way the configuration file spells it.
func (b byteSize) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// duration is a time.Duration written as a Go duration string ("60s",
// "1m30s", "250ms"). A bare number is refused: its unit would be a guess.
type duration time.Duration

// UnmarshalText reads a duration from the configuration file.
func (d *duration) UnmarshalText(text []byte) error {
	s := strings.TrimSpace(string(text))
	v, err := time.ParseDuration(s)
	if err != nil {
		if _, nerr := strconv.ParseFloat(s, 64); nerr == nil {
			return fmt.Errorf("duration %q has no unit: write e.g. \"%ss\"", s, s)
		}
		return fmt.Errorf("%q is not a duration such as \"60s\" or \"250ms\"", s)
	}
	if v < 0 {
		return fmt.Errorf("duration %q is negative", s)
	}
	*d = duration(v)
	return nil
}

// String spells d in one unit: whole hours, else whole minutes above one,
// else seconds ("1h", "30m", "60s", "250ms").
func (d duration) String() string { return formatDuration(time.Duration(d)) }

// formatDuration spells td as the admin API does, so the file, the API
// and `strata config default` agree.
func formatDuration(td time.Duration) string { return admin.Duration(td).String() }

// MarshalText writes d the way the configuration file spells it.
func (d duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

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
