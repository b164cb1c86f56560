package workload

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/strata-cache/strata/internal/tomlpos"
)

// Profile describes a workload. Users write it in TOML:
//
//	name = "photos"
//	clusters = 4           # frontend clusters sharing the key space
//	overlap = 0.8          # fraction of each cluster's keys shared by all clusters
//	fill_on_miss = true    # a get miss is followed by a set, as a read-through client does
//	prefill = false        # set every key once before measuring
//
//	[mix]                  # operation fractions; normalised to sum to 1
//	get = 0.9
//	set = 0.1
//	delete = 0.0
//	gets = 0.0
//	mg = 0.0
//
//	[[family]]
//	name = "photo"
//	pattern = "photo:{id}:meta"
//	keys = 1000000
//	weight = 1.0           # share of requests going to this family
//	alpha = 0.9            # Zipf exponent over the family's keys; 0 is uniform
//	key_size = { dist = "uniform", min = 24, max = 40 }
//	value_size = { dist = "lognormal", median = 230, sigma = 1.0, min = 1, max = 65536 }
//	ttl = { dist = "fixed", value = 3600 }
//
// Unknown keys are errors that name their line.
type Profile struct {
	Name        string   `toml:"name" json:"name"`
	Description string   `toml:"description" json:"description,omitempty"`
	Seed        uint64   `toml:"seed" json:"seed"`
	Clusters    int      `toml:"clusters" json:"clusters"`
	Overlap     float64  `toml:"overlap" json:"overlap"`
	FillOnMiss  bool     `toml:"fill_on_miss" json:"fill_on_miss"`
	Prefill     bool     `toml:"prefill" json:"prefill"`
	Mix         Mix      `toml:"mix" json:"mix"`
	Families    []Family `toml:"family" json:"family"`
}

// Mix holds the fraction of requests of each kind. gets is the text gets
// command (CAS unique in the reply); mg is the meta get with a value.
type Mix struct {
	Get     float64 `toml:"get" json:"get"`
	Set     float64 `toml:"set" json:"set"`
	Delete  float64 `toml:"delete" json:"delete"`
	Gets    float64 `toml:"gets" json:"gets"`
	MetaGet float64 `toml:"mg" json:"mg"`
}

func (m Mix) sum() float64 { return m.Get + m.Set + m.Delete + m.Gets + m.MetaGet }

// Family is a set of keys that share a pattern, a popularity law and size
// distributions — the unit the sampler reports on.
type Family struct {
	Name string `toml:"name" json:"name"`
	// Pattern contains {id} once; the key id is written there in decimal,
	// zero-padded when KeySize asks for a longer key.
	Pattern string  `toml:"pattern" json:"pattern"`
	Keys    uint64  `toml:"keys" json:"keys"`
	Weight  float64 `toml:"weight" json:"weight"`
	Alpha   float64 `toml:"alpha" json:"alpha"`
	// KeySize is optional: without it a key is just the pattern with the id.
	KeySize   *Dist `toml:"key_size" json:"key_size,omitempty"`
	ValueSize Dist  `toml:"value_size" json:"value_size"`
	TTL       Dist  `toml:"ttl" json:"ttl"`
}

// MaxKeyLen is memcached's key length limit.
const MaxKeyLen = 250

// MaxValueSize bounds generated values so that an item fits memcached's
// default 1 MiB item size with room for its header.
const MaxValueSize = 1<<20 - 1024

// ProfileError is a profile that cannot be used, with the line it comes from
// when known.
type ProfileError struct {
	File string // profile file or built-in name
	Line int    // 1-based; 0 when unknown
	Key  string // dotted key path, when the error is about one key
	Err  error
}

func (e *ProfileError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, ": %s", e.Key)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

func (e *ProfileError) Unwrap() error { return e.Err }

// ErrUnknownKey is wrapped by a ProfileError for a key the schema lacks.
var ErrUnknownKey = errors.New("unknown key")

var decodeErrRE = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`)

// LoadFile reads and validates a TOML profile. A profile without a name is
// named after its file.
func LoadFile(path string) (*Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read profile: %w", err)
	}
	p, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	if p.Name == "" {
		p.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return p, nil
}

// Parse decodes and validates a TOML profile; file names it in errors.
func Parse(file string, data []byte) (*Profile, error) {
	src := string(data)
	var p Profile
	md, err := toml.Decode(src, &p)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &ProfileError{File: file, Line: pe.Position.Line, Key: pe.LastKey, Err: errors.New(pe.Message)}
		}
		// Type mismatches come as plain errors that spell the line in
		// their text.
		if m := decodeErrRE.FindStringSubmatch(err.Error()); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, &ProfileError{File: file, Line: line, Key: m[2], Err: errors.New(m[3])}
		}
		return nil, &ProfileError{File: file, Err: err}
	}
	lines := tomlpos.Scan([]byte(src))
	if und := md.Undecoded(); len(und) > 0 {
		k := und[0].String()
		return nil, &ProfileError{File: file, Line: lines.Line(k), Key: k, Err: ErrUnknownKey}
	}
	if !md.IsDefined("overlap") {
		p.Overlap = 1
	}
	if !md.IsDefined("mix") {
		p.Mix = Mix{Get: 0.9, Set: 0.1}
	}
	// Weight defaults to 1, but an explicit 0 disables a family: decode the
	// weights again as pointers to tell the two apart.
	var weights struct {
		Family []struct {
			Weight *float64 `toml:"weight"`
		} `toml:"family"`
	}
	if _, err := toml.Decode(src, &weights); err == nil && len(weights.Family) == len(p.Families) {
		for i, f := range weights.Family {
			if f.Weight == nil {
				p.Families[i].Weight = 1
			}
		}
	}
	if err := p.Validate(); err != nil {
		var pe *ProfileError
		if errors.As(err, &pe) {
			pe.File = file
			pe.Line = lines.LineOf(pe.Key)
		}
		return nil, err
	}
	return &p, nil
}

// Validate fills defaults and rejects nonsense. Errors are *ProfileError
// with Key set (array elements as family[i].field).
func (p *Profile) Validate() error {
	bad := func(key string, format string, args ...any) error {
		return &ProfileError{File: p.Name, Key: key, Err: fmt.Errorf(format, args...)}
	}
	if p.Clusters == 0 {
		p.Clusters = 1
	}
	if p.Clusters < 0 || p.Clusters > 1024 {
		return bad("clusters", "%d clusters: want 1..1024", p.Clusters)
	}
	if !(p.Overlap >= 0 && p.Overlap <= 1) {
		return bad("overlap", "%v: want a fraction in [0, 1]", p.Overlap)
	}
	m := p.Mix
	for _, f := range []struct {
		k string
		v float64
	}{{"mix.get", m.Get}, {"mix.set", m.Set}, {"mix.delete", m.Delete}, {"mix.gets", m.Gets}, {"mix.mg", m.MetaGet}} {
		if !(f.v >= 0) {
			return bad(f.k, "%v must not be negative", f.v)
		}
	}
	if !(m.sum() > 0) {
		return bad("mix", "all fractions are zero")
	}
	if len(p.Families) == 0 {
		return bad("family", "a profile needs at least one [[family]]")
	}
	names := map[string]bool{}
	var totalWeight float64
	for i := range p.Families {
		f := &p.Families[i]
		at := func(field string) string { return fmt.Sprintf("family[%d].%s", i, field) }
		if f.Name == "" {
			f.Name = fmt.Sprintf("f%d", i)
		}
		if names[f.Name] {
			return bad(at("name"), "family %q defined twice", f.Name)
		}
		names[f.Name] = true
		if f.Pattern == "" {
			f.Pattern = f.Name + ":{id}"
		}
		if strings.Count(f.Pattern, "{id}") != 1 {
			return bad(at("pattern"), "%q must contain {id} exactly once", f.Pattern)
		}
		if strings.ContainsAny(f.Pattern, " \t\r\n\x00") {
			return bad(at("pattern"), "%q: memcached keys cannot hold spaces or control characters", f.Pattern)
		}
		if len(f.Pattern)-4+20 > MaxKeyLen {
			return bad(at("pattern"), "%q is too long for a %d-byte key", f.Pattern, MaxKeyLen)
		}
		if f.Keys == 0 || f.Keys > 1e12 {
			return bad(at("keys"), "%d keys: want 1..10^12", f.Keys)
		}
		if !(f.Weight >= 0) {
			return bad(at("weight"), "%v must not be negative", f.Weight)
		}
		totalWeight += f.Weight
		if !(f.Alpha >= 0) || f.Alpha > 10 {
			return bad(at("alpha"), "%v: want 0 (uniform) or a Zipf exponent in (0, 10]", f.Alpha)
		}
		if f.KeySize != nil {
			if field, err := f.KeySize.validate(); err != nil {
				return bad(at("key_size."+field), "%v", err)
			}
		}
		if field, err := f.ValueSize.validate(); err != nil {
			return bad(at("value_size."+field), "%v", err)
		}
		if field, err := f.TTL.validate(); err != nil {
			return bad(at("ttl."+field), "%v", err)
		}
	}
	if !(totalWeight > 0) {
		return bad("family", "every family has weight 0")
	}
	return nil
}
