package ctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/internal/tlsconn"
)

// Summary is the command's line in the binary's command list.
const Summary = "read and tune a running strata through its admin API"

// ErrUsage marks an error caused by bad command-line arguments; the binary
// exits 2 on it. Its text is "usage", the prefix of every such message.
var ErrUsage = errors.New("usage")

const ctlUsage = `usage: strata ctl [--admin ADDR] [--token-file FILE] [--ca FILE [--cert FILE --key FILE]] COMMAND

  get config|promotion|sampler|tiers|report|hotkeys
  hotkeys                (the same as get hotkeys)
  set promotion [--threshold N] [--rule PREFIX=N ...] [--no-rules] [--l1-max-ttl 60s]
  set sampler --rate R
  top [--interval 1s] [--count N]   headline figures, redrawn in the terminal
  shardmap TIER              a managed tier's published shard map
  drain TIER HOST:PORT       empty a server of its shards
  undrain TIER HOST:PORT     let it own shards again
  maintenance TIER HOST:PORT drain it, wait while it is restarted, return its shards
  maintenance --all TIER     the same for every server of the tier, one at a time
  convert pause|resume TIER  pause or resume a compat tier's conversion (shardmap shows its progress)
  locality show ID           a μ-shard ("prefix field"): owner, epoch, state, counters, history, last migrate request
  locality migrate ID REGION move it now
  locality pin ID REGION     pin it to REGION ("" unpins)
  locality migrations        the moves in flight, and manual moves refused or waiting

It prints the server's JSON reply. On an error reply it prints the server's
message and exits 1.`

// ctlGets maps `ctl get` targets onto API paths.
var ctlGets = map[string]string{
	"config":    "config",
	"promotion": "promotion",
	"sampler":   "sampler",
	"tiers":     "tiers",
	"report":    "sampler/report",
	"hotkeys":   "hotkeys",
}

// Run is `strata ctl ARGS`, the command-line client of the admin API: it
// sends one request (or, for top, a request a frame until interrupted) and
// prints the reply. Bad arguments return an error that wraps ErrUsage; an
// error reply returns the server's message.
func Run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ctl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, ctlUsage); fs.PrintDefaults() }
	addr := fs.String("admin", admin.DefaultListen, "admin API `address` (host:port, http://host:port or https://host:port)")
	tokenFile := fs.String("token-file", "", "`file` holding the bearer token")
	timeout := fs.Duration("timeout", 10*time.Second, "how long to wait for the server")
	ca := fs.String("ca", os.Getenv("STRATA_CA"), "PEM `file` of the authorities an https:// server's certificate chains to (default $STRATA_CA; empty: the system's)")
	cert := fs.String("cert", "", "client certificate `file`, for a server that verifies clients ([tls] ca)")
	key := fs.String("key", "", "the client certificate's key `file`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	// The same reader as a pool's TLS files; nil for plain http://.
	tlsCfg, err := tlsconn.Dial{On: strings.HasPrefix(*addr, "https://"), CA: *ca, Cert: *cert, Key: *key}.Load()
	if err != nil {
		return err
	}
	token := ""
	if *tokenFile != "" {
		tok, err := admin.ReadToken(*tokenFile)
		if err != nil {
			return err
		}
		token = tok
	}
	c := admin.NewTLSClient(*addr, token, *timeout, tlsCfg)
	ctx := context.Background()
	rest := fs.Args()
	if len(rest) == 1 && rest[0] == "hotkeys" {
		rest = []string{"get", "hotkeys"}
	}
	if len(rest) > 0 && rest[0] == "top" {
		return runTop(admin.BaseURL(*addr), token, admin.HTTPClient(*timeout, tlsCfg), rest[1:], stdout, stderr)
	}
	if len(rest) > 0 && rest[0] == "locality" {
		v, err := runCtlLocality(ctx, c, rest[1:])
		if err != nil {
			return err
		}
		return printJSON(stdout, v)
	}
	if len(rest) > 0 && rest[0] == "maintenance" {
		// Minutes long: the admin server walks; --wait bounds the following.
		return runMaintenance(ctx, c, rest[1:], stdout, stderr)
	}
	if len(rest) < 2 {
		return fmt.Errorf("%w\n%s", ErrUsage, ctlUsage)
	}
	return request(ctx, c, rest, stdout, stderr)
}

// request runs the commands that are one API call: shardmap, drain,
// undrain, convert, get and set.
func request(ctx context.Context, c *admin.Client, rest []string, stdout, stderr io.Writer) error {
	switch rest[0] {
	case "shardmap":
		if len(rest) != 2 {
			return fmt.Errorf("%w: shardmap TIER", ErrUsage)
		}
		m, err := c.ShardMap(ctx, rest[1])
		if err != nil {
			return err
		}
		return printJSON(stdout, m)
	case "drain", "undrain":
		if len(rest) != 3 {
			return fmt.Errorf("%w: %s TIER HOST:PORT", ErrUsage, rest[0])
		}
		m, err := c.SetDrain(ctx, rest[1], rest[2], rest[0] == "drain")
		if err != nil {
			return err
		}
		return printJSON(stdout, m)
	case "convert":
		if len(rest) != 3 || (rest[1] != "pause" && rest[1] != "resume") {
			return fmt.Errorf("%w: convert pause|resume TIER", ErrUsage)
		}
		m, err := c.SetConvertPaused(ctx, rest[2], rest[1] == "pause")
		if err != nil {
			return err
		}
		return printJSON(stdout, m)
	case "get":
		path, ok := ctlGets[rest[1]]
		if !ok || len(rest) > 2 {
			return fmt.Errorf("%w: get config|promotion|sampler|tiers|report|hotkeys", ErrUsage)
		}
		raw, err := c.Raw(ctx, http.MethodGet, path, nil)
		if err != nil {
			return err
		}
		return printJSON(stdout, raw)
	case "set":
		switch rest[1] {
		case "promotion":
			patch, err := promotionPatch(rest[2:], stderr)
			if err != nil {
				return err
			}
			p, err := c.PatchPromotion(ctx, patch)
			if err != nil {
				return err
			}
			return printJSON(stdout, p)
		case "sampler":
			rate, err := samplerRate(rest[2:], stderr)
			if err != nil {
				return err
			}
			st, err := c.SetSampleRate(ctx, rate)
			if err != nil {
				return err
			}
			return printJSON(stdout, st)
		}
		return fmt.Errorf("%w: set promotion|sampler", ErrUsage)
	}
	return fmt.Errorf("%w: unknown command %q\n%s", ErrUsage, rest[0], ctlUsage)
}

// ruleFlags collects repeated --rule PREFIX=N.
type ruleFlags []admin.Rule

func (r *ruleFlags) String() string { return fmt.Sprint(*r) }

func (r *ruleFlags) Set(v string) error {
	i := strings.LastIndexByte(v, '=')
	if i <= 0 {
		return errors.New("want PREFIX=N")
	}
	n, err := strconv.ParseUint(v[i+1:], 10, 32)
	if err != nil {
		return fmt.Errorf("threshold %q is not a whole number", v[i+1:])
	}
	*r = append(*r, admin.Rule{Prefix: v[:i], Threshold: uint32(n)})
	return nil
}

// promotionPatch holds only the settings given, so the others keep their
// values on the server.
func promotionPatch(args []string, stderr io.Writer) (admin.PromotionPatch, error) {
	var patch admin.PromotionPatch
	fs := flag.NewFlagSet("set promotion", flag.ContinueOnError)
	fs.SetOutput(stderr)
	threshold := fs.Int64("threshold", 0, "global promotion threshold `N` (1 promotes every L2 hit)")
	var rules ruleFlags
	fs.Var(&rules, "rule", "per-prefix threshold `PREFIX=N`; repeat it; replaces every rule")
	noRules := fs.Bool("no-rules", false, "remove every per-prefix rule")
	ttl := fs.String("l1-max-ttl", "", "longest life of a promoted copy in L1, e.g. `60s`")
	if err := fs.Parse(args); err != nil {
		return patch, err
	}
	if fs.NArg() > 0 {
		return patch, fmt.Errorf("%w: unexpected argument %q", ErrUsage, fs.Arg(0))
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "threshold":
			patch.Threshold = threshold
		case "l1-max-ttl":
			patch.L1MaxTTL = ttl
		}
	})
	switch {
	case *noRules && len(rules) > 0:
		return patch, fmt.Errorf("%w: --rule and --no-rules together", ErrUsage)
	case *noRules:
		patch.Rules = &[]admin.Rule{}
	case len(rules) > 0:
		r := []admin.Rule(rules)
		patch.Rules = &r
	}
	if patch == (admin.PromotionPatch{}) {
		return patch, fmt.Errorf("%w: set promotion needs --threshold, --rule, --no-rules or --l1-max-ttl", ErrUsage)
	}
	return patch, nil
}

func samplerRate(args []string, stderr io.Writer) (int64, error) {
	fs := flag.NewFlagSet("set sampler", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rate := fs.Int64("rate", -1, "sample one key in `R`; 0 turns sampling off")
	if err := fs.Parse(args); err != nil {
		return 0, err
	}
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "rate" })
	if !given || fs.NArg() > 0 {
		return 0, fmt.Errorf("%w: set sampler --rate R", ErrUsage)
	}
	// A negative rate is sent as it is: the server's refusal names the
	// field, as for every other client.
	return *rate, nil
}

// printJSON prints v indented: a raw reply as the server wrote it, or a
// decoded one marshalled again.
func printJSON(stdout io.Writer, v any) error {
	var out bytes.Buffer
	raw, ok := v.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		raw = b
	}
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		out.Reset()
		out.Write(raw)
	}
	if out.Len() == 0 || out.Bytes()[out.Len()-1] != '\n' {
		out.WriteByte('\n')
	}
	_, err := stdout.Write(out.Bytes())
	return err
}
