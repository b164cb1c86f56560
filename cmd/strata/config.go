package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/strata-cache/strata/internal/tomlpos"
)

// fileConfig is the TOML file, section by section. A zero field means "not
// given"; pointers mark the settings whose zero value is itself a valid
// choice or an error worth naming. resolve turns it into each package's
// Config; config_default.go documents every key.
type fileConfig struct {
	Server    serverSection    `toml:"server" json:"server"`
	L1        tierSection      `toml:"l1" json:"l1"`
	L2        tierSection      `toml:"l2" json:"l2"`
	Promotion promotionSection `toml:"promotion" json:"promotion"`
	HotKeys   hotkeysSection   `toml:"hotkeys" json:"hotkeys"`
	Sampler   samplerSection   `toml:"sampler" json:"sampler"`
	Limits    limitsSection    `toml:"limits" json:"limits"`
	Log       logSection       `toml:"log" json:"log"`
	Admin     adminSection     `toml:"admin" json:"admin"`
	Control   controlSection   `toml:"control" json:"control"`
	Locality  localitySection  `toml:"locality" json:"locality"`
}

type serverSection struct {
	Listen       string   `toml:"listen" json:"listen"`
	Cluster      string   `toml:"cluster" json:"cluster"`
	Region       string   `toml:"region" json:"region"`
	Loops        *int64   `toml:"loops" json:"loops"`
	DrainTimeout duration `toml:"drain_timeout" json:"drain_timeout"`
}

// tierSection is [l1] or [l2]. kind picks the tier; when it is absent,
// servers make a memcached pool and anything else the embedded store.
type tierSection struct {
	Kind string `toml:"kind" json:"kind"` // "embedded", "memcached" or "none" (l1 only)

	// embedded
	Memory byteSize `toml:"memory" json:"memory,omitempty"`

	// memcached pool
	Servers []serverEntry `toml:"servers" json:"servers,omitempty"`
	poolSection

	// l1 only: the longest a promoted copy may live in L1.
	MaxTTL duration `toml:"max_ttl" json:"max_ttl,omitempty"`
}

type promotionSection struct {
	Threshold *int64        `toml:"threshold" json:"threshold"`
	Rules     []ruleSection `toml:"rule" json:"rule,omitempty"`
}

type ruleSection struct {
	Prefix    *string `toml:"prefix" json:"prefix"`
	Threshold *int64  `toml:"threshold" json:"threshold"`
}

type samplerSection struct {
	Rate       *int64          `toml:"rate" json:"rate"`
	Dir        string          `toml:"dir" json:"dir"`
	RotateSize byteSize        `toml:"rotate_size" json:"rotate_size"`
	RotateAge  duration        `toml:"rotate_age" json:"rotate_age"`
	Gzip       bool            `toml:"gzip" json:"gzip"`
	Window     duration        `toml:"window" json:"window"`
	Families   []familySection `toml:"family" json:"family,omitempty"`
}

type familySection struct {
	Match  string `toml:"match" json:"match"`
	Family string `toml:"family" json:"family"`
}

type limitsSection struct {
	MaxItemSize      byteSize `toml:"max_item_size" json:"max_item_size"`
	MaxInflight      *int64   `toml:"max_inflight" json:"max_inflight"`
	MaxOutboundBytes byteSize `toml:"max_outbound_bytes" json:"max_outbound_bytes"`
	FlushAll         *bool    `toml:"flush_all" json:"flush_all"`
}

type logSection struct {
	Format string `toml:"format" json:"format"`
	Level  string `toml:"level" json:"level"`
}

type adminSection struct {
	Listen    string `toml:"listen" json:"listen"`
	TokenFile string `toml:"token_file" json:"token_file"`
	// AllowedHosts are the Host header names accepted besides loopback
	// ones while no token is set (see admin.Config.AllowedHosts).
	AllowedHosts []string `toml:"allowed_hosts" json:"allowed_hosts"`
}

// configError is one problem of a configuration file, printed as
// "FILE:LINE: key: message" (LINE omitted when unknown, key when the
// problem is not one key's).
type configError struct {
	File string
	Line int
	Key  string
	Msg  string
}

func (e *configError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteByte(':')
		if e.Line > 0 {
			b.WriteString(strconv.Itoa(e.Line))
			b.WriteByte(':')
		}
		b.WriteByte(' ')
	}
	if e.Key != "" {
		b.WriteString(clipKey(e.Key))
		b.WriteString(": ")
	}
	b.WriteString(clipMsg(e.Msg))
	return b.String()
}

// configErrors is every problem found in one file, in line order. A
// configuration with any of them is rejected whole.
type configErrors []*configError

func (es configErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

func (es configErrors) sorted() configErrors {
	sort.SliceStable(es, func(i, j int) bool {
		li, lj := es[i].Line, es[j].Line
		if li == 0 || lj == 0 {
			return lj == 0 && li != 0
		}
		return li < lj
	})
	return es
}

// errConfig marks an error that is the configuration's fault.
var errConfig = errors.New("invalid configuration")

// errReported ends a command whose problems were already printed.
var errReported = errors.New("configuration has errors")

// parsedFile is a decoded file with what is needed to place its errors.
type parsedFile struct {
	name  string
	fc    fileConfig
	md    toml.MetaData
	lines *tomlpos.Lines
	// fromFlag marks the keys a command-line flag set (key → flag name).
	fromFlag map[string]string
}

// errAt builds an error for the key at its indexed path
// ("promotion.rule[1].threshold"), found on its line.
func (p *parsedFile) errAt(key, format string, args ...any) *configError {
	if fl, ok := p.fromFlag[key]; ok {
		return flagError(fl, format, args...)
	}
	return &configError{File: p.name, Line: p.lines.LineOf(key), Key: key, Msg: fmt.Sprintf(format, args...)}
}

// tomlErrorRE reads the decoder's errors that are not ParseErrors (type
// mismatches): "toml: line 3 (last key "l1.memory"): message".
var tomlErrorRE = regexp.MustCompile(`^toml: (?:line (\d+) )?\(last key "([^"]*)"\): (.*)$`)

// parseConfig decodes a configuration file. Syntax and type errors stop
// it at the first (returned as error). Otherwise it returns the file and
// every unknown key, each with its line, so that resolve can add the
// problems of the known keys to them.
func parseConfig(name string, data []byte) (*parsedFile, configErrors, error) {
	p := &parsedFile{name: name, lines: tomlpos.Scan(data), fromFlag: map[string]string{}}
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&p.fc)
	if err != nil {
		return nil, nil, configErrors{p.decodeError(err)}
	}
	p.md = md
	var errs configErrors
	var reported []string
	for _, k := range md.Undecoded() {
		key := k.String()
		if coveredBy(key, reported) {
			continue // a key inside an unknown table already reported
		}
		reported = append(reported, key)
		line, indexed := p.lines.Next(key)
		what := "unknown key"
		if md.Type(k...) == "Hash" || md.Type(k...) == "ArrayHash" {
			what = "unknown section"
		}
		errs = append(errs, &configError{File: name, Line: line, Key: indexed, Msg: what + suggest(key)})
	}
	errs = append(errs, p.caseErrors()...)
	return p, errs, nil
}

func (p *parsedFile) decodeError(err error) *configError {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		e := &configError{File: p.name, Line: pe.Position.Line, Key: pe.LastKey, Msg: pe.Message}
		if e.Line == 0 && e.Key != "" {
			e.Line = p.lines.LineOf(e.Key)
		}
		return e
	}
	msg := err.Error()
	if m := tomlErrorRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		if line == 0 {
			line = p.lines.LineOf(m[2])
		}
		return &configError{File: p.name, Line: line, Key: m[2], Msg: m[3]}
	}
	return &configError{File: p.name, Msg: strings.TrimPrefix(msg, "toml: ")}
}

func coveredBy(key string, parents []string) bool {
	for _, p := range parents {
		if strings.HasPrefix(key, p+".") {
			return true
		}
	}
	return false
}

// knownKeys is every key path the schema has, with array-of-table
// elements unindexed ("promotion.rule.prefix").
var knownKeys = func() map[string]bool {
	m := map[string]bool{}
	var walk func(prefix string, t reflect.Type)
	walk = func(prefix string, t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Anonymous {
				walk(prefix, f.Type)
				continue
			}
			name := f.Tag.Get("toml")
			if name == "" {
				continue
			}
			key := prefix + name
			m[key] = true
			ft := f.Type
			if ft.Kind() == reflect.Slice {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && ft != reflect.TypeOf(serverEntry{}) {
				walk(key+".", ft)
			}
		}
	}
	walk("", reflect.TypeOf(fileConfig{}))
	return m
}()

// caseErrors reports keys the decoder accepted only because it matches
// field names case-insensitively: the file format is case-sensitive.
func (p *parsedFile) caseErrors() configErrors {
	var errs configErrors
	for _, k := range p.md.Keys() {
		key := k.String()
		if knownKeys[key] || strings.Contains(key, "servers.") {
			continue
		}
		for known := range knownKeys {
			if strings.EqualFold(known, key) {
				line, indexed := p.lines.Next(key)
				errs = append(errs, &configError{File: p.name, Line: line, Key: indexed, Msg: fmt.Sprintf("unknown key (keys are lower case: %q)", known)})
				break
			}
		}
	}
	return errs
}

// suggest names a known key close to a misspelt one: a sibling when the
// key's section exists, else any key of the schema.
func suggest(key string) string {
	parent, leaf := "", key
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		parent, leaf = key[:i+1], key[i+1:]
	}
	best, bestD := "", 3
	for known := range knownKeys {
		cand, against := known, key
		if parent != "" && knownKeys[strings.TrimSuffix(parent, ".")] {
			if !strings.HasPrefix(known, parent) || strings.Contains(known[len(parent):], ".") {
				continue
			}
			cand, against = known[len(parent):], leaf
		}
		if abs(len(against)-len(cand)) >= bestD {
			continue // the distance is at least that: spares a long key's quadratic cost
		}
		if d := editDistance(against, cand); d < bestD || (d == bestD && cand < best) {
			best, bestD = cand, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// readConfigFile reads and decodes path; an empty path is the empty file.
// It is the one reader of a configuration file, at start, in `config
// check` and on SIGHUP, so the three apply the same rules: a file over
// maxConfigBytes, one that sets no key, and one past configBounds are
// refused before the TOML decoder sees them.
func readConfigFile(path string) (*parsedFile, configErrors, error) {
	if path == "" {
		return parseConfig("", nil)
	}
	data, err := readBounded(path, maxConfigBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errConfig, err)
	}
	if err := checkConfigInput(path, data); err != nil {
		return nil, nil, configErrors{err}
	}
	return parseConfig(path, data)
}

func init() {
	register("config", "check a configuration file (config check FILE) or print the default one (config default)", runConfig)
}

// runConfig is `strata config check FILE...` and `strata config default`.
func runConfig(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: config check FILE... | config default", errUsage)
	}
	switch args[0] {
	case "default":
		if len(args) > 1 {
			return fmt.Errorf("%w: config default takes no arguments", errUsage)
		}
		_, err := io.WriteString(stdout, defaultConfigFile)
		return err
	case "check":
		if len(args) < 2 {
			return fmt.Errorf("%w: config check FILE [FILE...]", errUsage)
		}
		bad := false
		for _, path := range args[1:] {
			if _, err := loadSettings(path, nil); err != nil {
				fmt.Fprintln(stderr, err)
				bad = true
				continue
			}
			fmt.Fprintf(stdout, "%s: ok\n", path)
		}
		if bad {
			return errReported
		}
		return nil
	}
	return fmt.Errorf("%w: unknown config command %q (check or default)", errUsage, args[0])
}
