package configfile

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Size is a size in bytes, written "64MiB", "1GiB", "512KiB", "100MB" or
// a plain number of bytes. Binary units (KiB, MiB, GiB, TiB) are powers
// of 1024, SI units (kB, MB, GB, TB) powers of 1000; units are
// case-insensitive.
type Size int64

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	// Longest suffixes first, so "MiB" is not read as "B".
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"b", 1},
}

// ParseSize reads a Size. A fraction is accepted when the bytes it makes
// are whole ("1.5GiB"); a negative size or one past int64 is refused.
func ParseSize(s string) (Size, error) {
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
		return Size(v), nil
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size %q: want a number and a unit such as \"64MiB\"", s)
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return Size(n * mult), nil
}

// UnmarshalText reads a size from the file.
func (b *Size) UnmarshalText(text []byte) error {
	v, err := ParseSize(string(text))
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// String spells b with the largest binary unit that divides it.
func (b Size) String() string {
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

// MarshalText writes b the way the file spells it.
func (b Size) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// Duration is a time.Duration written as a Go duration string ("60s",
// "1m30s", "250ms"). A bare number is refused: its unit would be a guess.
// So is a negative duration.
type Duration time.Duration

// UnmarshalText reads a duration from the file.
func (d *Duration) UnmarshalText(text []byte) error {
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
	*d = Duration(v)
	return nil
}

// String spells d in one unit when it can: whole hours, else whole
// minutes above one, else whole seconds ("1h", "30m", "60s"); anything
// finer as Go does ("250ms", "1.5s").
func (d Duration) String() string { return FormatDuration(time.Duration(d)) }

// MarshalText writes d the way the file spells it.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// FormatDuration spells td as Duration.String does, for the readers that
// show a time.Duration next to the file (an API, a default file).
func FormatDuration(td time.Duration) string {
	switch {
	case td == 0:
		return "0s"
	case td%time.Hour == 0:
		return strconv.FormatInt(int64(td/time.Hour), 10) + "h"
	case td%time.Minute == 0 && td > time.Minute:
		return strconv.FormatInt(int64(td/time.Minute), 10) + "m"
	case td%time.Second == 0:
		return strconv.FormatInt(int64(td/time.Second), 10) + "s"
	}
	return td.String()
}

// Unsigned narrows a number of the file to an unsigned field. The range
// is the field's owner to check; this only refuses what the type cannot
// hold, which the owner would never see.
func Unsigned[T uint32 | uint64](v int64) (T, error) {
	if v < 0 {
		return 0, fmt.Errorf("%d is negative", v)
	}
	if uint64(v) > uint64(^T(0)) {
		return 0, fmt.Errorf("%d is too large", v)
	}
	return T(v), nil
}
