package config

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/BurntSushi/toml"

	"github.com/strata-cache/strata/config/confimport"
	"github.com/strata-cache/strata/internal/configfile"
)

// File is the TOML file, section by section. A zero field means "not
// given"; pointers mark the settings whose zero value is itself a valid
// choice or an error worth naming. resolve turns it into each package's
// Config; default.toml documents every key.
type File struct {
	Server    serverSection    `toml:"server" json:"server"`
	L1        TierSection      `toml:"l1" json:"l1"`
	L2        TierSection      `toml:"l2" json:"l2"`
	Promotion promotionSection `toml:"promotion" json:"promotion"`
	HotKeys   hotkeysSection   `toml:"hotkeys" json:"hotkeys"`
	Sampler   samplerSection   `toml:"sampler" json:"sampler"`
	Limits    limitsSection    `toml:"limits" json:"limits"`
	Log       logSection       `toml:"log" json:"log"`
	Admin     adminSection     `toml:"admin" json:"admin"`
	Control   controlSection   `toml:"control" json:"control"`
	Locality  localitySection  `toml:"locality" json:"locality"`
	TLS       tlsSection       `toml:"tls" json:"tls"`
	Auth      authSection      `toml:"auth" json:"auth"`
}

// authSection is [auth]: proxy/auth.Config.
type authSection struct {
	UsersFile string   `toml:"users_file" json:"users_file"`
	SlowAfter *int64   `toml:"slow_after" json:"slow_after"`
	MaxDelay  duration `toml:"max_delay" json:"max_delay"`
}

type serverSection struct {
	Listen       string   `toml:"listen" json:"listen"`
	ListenPlain  string   `toml:"listen_plain" json:"listen_plain"`
	Cluster      string   `toml:"cluster" json:"cluster"`
	Region       string   `toml:"region" json:"region"`
	Loops        *int64   `toml:"loops" json:"loops"`
	MergeLoops   *bool    `toml:"merge_loops" json:"merge_loops"`
	DrainTimeout duration `toml:"drain_timeout" json:"drain_timeout"`
	// HandoffSocket is handoff.Config.Socket.
	HandoffSocket string `toml:"handoff_socket" json:"handoff_socket,omitempty"`
}

// TierSection is [l1] or [l2]. kind picks the tier; when it is absent,
// servers make a memcached pool and anything else the embedded store.
type TierSection struct {
	Kind string `toml:"kind" json:"kind"` // "embedded", "memcached" or "none" (l1 only)

	// embedded
	Memory   byteSize `toml:"memory" json:"memory,omitempty"`
	Snapshot string   `toml:"snapshot" json:"snapshot,omitempty"`

	// memcached pool
	Servers []ServerEntry `toml:"servers" json:"servers,omitempty"`
	PoolSection

	// l1 only: the longest a promoted copy may live in L1.
	MaxTTL duration `toml:"max_ttl" json:"max_ttl,omitempty"`
}

type promotionSection struct {
	Threshold *int64        `toml:"threshold" json:"threshold"`
	Rules     []RuleSection `toml:"rule" json:"rule,omitempty"`
}

type RuleSection struct {
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

// tlsSection is [tls]: the client listener's TLS (proxy.Config.TLS).
type tlsSection struct {
	Cert             string   `toml:"cert" json:"cert"`
	Key              string   `toml:"key" json:"key"`
	CA               string   `toml:"ca" json:"ca"`
	Verify           string   `toml:"verify" json:"verify"`
	HandshakeTimeout duration `toml:"handshake_timeout" json:"handshake_timeout"`
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
	TLS          bool     `toml:"tls" json:"tls"`
}

// errConfig marks an error that is the configuration's fault.
var errConfig = errors.New("invalid configuration")

// errReported ends a command whose problems were already printed.
var errReported = errors.New("configuration has errors")

// fileSchema is every key File defines.
var fileSchema = configfile.SchemaOf(File{})

// parsedFile is a decoded file with what is needed to place its errors.
type parsedFile struct {
	file *configfile.File
	fc   File
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
func parseConfig(name string, data []byte) (*parsedFile, Errors, error) {
	p := &parsedFile{fromFlag: map[string]string{}}
	f, errs, fatal := fileSchema.Decode(name, data, &p.fc)
	if fatal != nil {
		return nil, nil, Errors{fatal}
	}
	p.file, p.md = f, f.Meta
	return p, Errors(errs), nil
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
func readConfigFile(path string) (*parsedFile, Errors, error) {
	if path == "" {
		return parseConfig("", nil)
	}
	data, err := configfile.Read(path, configLimits)
	var ce *configError
	if errors.As(err, &ce) {
		return nil, nil, Errors{ce}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errConfig, err)
	}
	return parseConfig(path, data)
}

// ErrUsage marks an error in the arguments of a command of this package
// (Command, ParseFlags).
var ErrUsage = errors.New("usage")

// Summary is the config command's line in strata's usage.
const Summary = "check a configuration file (config check FILE), print the default one (config default) or translate twemproxy's or mcrouter's (config import twemproxy FILE [POOL] | mcrouter FILE)"

// Command is `strata config check FILE...`, `strata config default` and
// `strata config import`.
func Command(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: config check FILE... | config default", ErrUsage)
	}
	switch args[0] {
	case "default":
		if len(args) > 1 {
			return fmt.Errorf("%w: config default takes no arguments", ErrUsage)
		}
		_, err := io.WriteString(stdout, DefaultFile)
		return err
	case "check":
		if len(args) < 2 {
			return fmt.Errorf("%w: config check FILE [FILE...]", ErrUsage)
		}
		bad := false
		for _, path := range args[1:] {
			if _, err := Load(path, nil); err != nil {
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
	case "import":
		return importCommand(args[1:], stdout)
	}
	return fmt.Errorf("%w: unknown config command %q (check, default or import)", ErrUsage, args[0])
}

// importCommand is `strata config import twemproxy FILE [POOL]` and
// `strata config import mcrouter FILE`: the translation is confimport's;
// this reads the file and prints the result.
func importCommand(args []string, stdout io.Writer) error {
	const usage = "config import twemproxy FILE [POOL] | config import mcrouter FILE"
	twemproxy := len(args) >= 2 && args[0] == "twemproxy" && len(args) <= 3
	if !twemproxy && (len(args) != 2 || args[0] != "mcrouter") {
		return fmt.Errorf("%w: %s", ErrUsage, usage)
	}
	data, err := os.ReadFile(args[1])
	if err != nil {
		return err
	}
	var out string
	if twemproxy {
		out, err = confimport.Twemproxy(args[1], data, append(args[2:], "")[0])
	} else {
		out, err = confimport.Mcrouter(args[1], data)
	}
	if err == nil {
		_, err = io.WriteString(stdout, out)
	}
	return err
}
