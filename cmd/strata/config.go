package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/BurntSushi/toml"

	"github.com/strata-cache/strata/internal/configfile"
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
	Memory   byteSize `toml:"memory" json:"memory,omitempty"`
	Snapshot string   `toml:"snapshot" json:"snapshot,omitempty"`

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

// errConfig marks an error that is the configuration's fault.
var errConfig = errors.New("invalid configuration")

// errReported ends a command whose problems were already printed.
var errReported = errors.New("configuration has errors")

// fileSchema is every key fileConfig defines.
var fileSchema = configfile.SchemaOf(fileConfig{})

// parsedFile is a decoded file with what is needed to place its errors.
type parsedFile struct {
	file *configfile.File
	fc   fileConfig
	md   toml.MetaData
	// fromFlag marks the keys a command-line flag set (key → flag name).
	fromFlag map[string]string
}

// errAt builds an error for the key at its indexed path
// ("promotion.rule[1].threshold"), found on its line, or naming the flag
// that set the key.
func (p *parsedFile) errAt(key, format string, args ...any) *configError {
	if fl, ok := p.fromFlag[key]; ok {
		return flagError(fl, format, args...)
	}
	return p.file.ErrAt(key, format, args...)
}

// parseConfig decodes a configuration file. Syntax and type errors stop
// it at the first (returned as error). Otherwise it returns the file and
// every unknown key, each with its line, so that resolve can add the
// problems of the known keys to them.
func parseConfig(name string, data []byte) (*parsedFile, configErrors, error) {
	p := &parsedFile{fromFlag: map[string]string{}}
	f, errs, fatal := fileSchema.Decode(name, data, &p.fc)
	if fatal != nil {
		return nil, nil, configErrors{fatal}
	}
	p.file, p.md = f, f.Meta
	return p, configErrors(errs), nil
}

// readConfigFile reads and decodes path; an empty path is the empty file.
// It is the one reader of a configuration file, at start, in `config
// check` and on SIGHUP, so the three apply the same rules (configLimits).
//
// A file that sets nothing is refused wherever it is read. On SIGHUP it
// is far more likely a file caught half written than a wish for the
// defaults, and taking it at its word would reset every live setting, a
// token set through the file included; `config check` and the start
// refuse it too, so that what they accept a SIGHUP accepts.
func readConfigFile(path string) (*parsedFile, configErrors, error) {
	if path == "" {
		return parseConfig("", nil)
	}
	data, err := configfile.Read(path, configLimits)
	var ce *configError
	if errors.As(err, &ce) {
		return nil, nil, configErrors{ce}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errConfig, err)
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
