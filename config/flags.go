package config

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Flags are serve's command-line settings. Every flag but --config
// overrides one key of the file; only the flags given on the command line
// do (set records them), so a reload re-reads the file and applies the same
// overrides again.
type Flags struct {
	Path string            // --config
	set  map[string]string // flag name → value, for the flags given
}

// flagKeys maps each overriding flag to the file key it replaces and to
// that key's field: a *string, a **int64 or, for --l1 and --l2, the whole
// *TierSection.
var flagKeys = []struct {
	flag, key, usage string
	field            func(*File) any
}{
	{"listen", "server.listen", "memcached endpoint `host:port` (default 127.0.0.1:11211)",
		func(c *File) any { return &c.Server.Listen }},
	{"admin", "admin.listen", "admin HTTP `host:port` (default 127.0.0.1:11299)",
		func(c *File) any { return &c.Admin.Listen }},
	{"cluster", "server.cluster", "cluster `name` of this proxy, the owner of its L1 (default local)",
		func(c *File) any { return &c.Server.Cluster }},
	{"region", "server.region", "region `name` of this proxy, the owner of its L2 (default local)",
		func(c *File) any { return &c.Server.Region }},
	{"promotion-threshold", "promotion.threshold", "promote an L2 hit into L1 with probability 1/`N` (default 32)",
		func(c *File) any { return &c.Promotion.Threshold }},
	{"l1", "l1.servers", "L1 tier: memcached `servers` host:port,... or \"none\" or \"embedded\" (default embedded 64MiB)",
		func(c *File) any { return &c.L1 }},
	{"l2", "l2.servers", "L2 tier: memcached `servers` host:port,... or \"embedded\" (default embedded 1GiB)",
		func(c *File) any { return &c.L2 }},
	{"sample-rate", "sampler.rate", "sample one key in `R` (0: off; default 1000000)",
		func(c *File) any { return &c.Sampler.Rate }},
	{"sample-dir", "sampler.dir", "write the sample log into `dir` (default: no log)",
		func(c *File) any { return &c.Sampler.Dir }},
	{"admin-token-file", "admin.token_file", "`file` holding the bearer token /admin/v1 requires",
		func(c *File) any { return &c.Admin.TokenFile }},
	{"log-level", "log.level", "log `level`: debug, info, warn or error (default info)",
		func(c *File) any { return &c.Log.Level }},
	{"log-format", "log.format", "log `format`: text or json (default text)",
		func(c *File) any { return &c.Log.Format }},
}

func ParseFlags(args []string, stderr io.Writer) (*Flags, error) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &Flags{set: map[string]string{}}
	fs.StringVar(&f.Path, "config", "", "TOML configuration `file`; flags override it")
	vals := make(map[string]*string, len(flagKeys))
	for _, k := range flagKeys {
		vals[k.flag] = fs.String(k.flag, "", k.usage)
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("%w: unexpected argument %q", ErrUsage, fs.Arg(0))
	}
	fs.Visit(func(fl *flag.Flag) {
		if v, ok := vals[fl.Name]; ok {
			f.set[fl.Name] = *v
		}
	})
	return f, nil
}

// flagError is a bad flag value; it names the flag, not a file line.
func flagError(name, format string, args ...any) *configError {
	return &configError{Key: "--" + name, Msg: fmt.Sprintf(format, args...)}
}

// apply overrides the file's keys with the flags given, and records in
// p.fromFlag which keys a flag set so that their errors name the flag.
func (f *Flags) apply(p *parsedFile) Errors {
	if f == nil {
		return nil
	}
	var errs Errors
	for _, k := range flagKeys {
		v, ok := f.set[k.flag]
		if !ok {
			continue
		}
		p.fromFlag[k.key] = k.flag
		switch dst := k.field(&p.fc).(type) {
		case *string:
			*dst = v
		case **int64:
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				errs = append(errs, flagError(k.flag, "%q is not a whole number", v))
				continue
			}
			*dst = &n
		case *TierSection:
			if err := dst.setFromFlag(v); err != nil {
				errs = append(errs, flagError(k.flag, "%v", err))
			}
			p.fromFlag[k.flag+".kind"] = k.flag
			p.fromFlag[k.flag+".memory"] = k.flag
		}
	}
	return errs
}

// setFromFlag replaces a tier section with what --l1 or --l2 says:
// "none", "embedded", or a comma-separated server list. The pool options
// of the file are kept, so a file can tune a pool whose servers come from
// the command line.
func (t *TierSection) setFromFlag(v string) error {
	v = strings.TrimSpace(v)
	switch v {
	case "":
		return fmt.Errorf("empty: want host:port,... or none or embedded")
	case KindNone, KindEmbedded:
		t.Kind, t.Servers = v, nil
		return nil
	}
	var servers []ServerEntry
	for _, a := range strings.Split(v, ",") {
		a = strings.TrimSpace(a)
		if err := checkHostPort(a); err != nil {
			return err
		}
		servers = append(servers, ServerEntry{Addr: a, Weight: 1})
	}
	t.Kind, t.Servers, t.Memory = KindMemcached, servers, 0
	return nil
}
