package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/strata-cache/strata/control/admin"
)

func init() {
	register("ctl", "read and tune a running strata through its admin API", runCtl)
}

const ctlUsage = `usage: strata ctl [--admin ADDR] [--token-file FILE] COMMAND

  get config|promotion|sampler|tiers|report
  set promotion [--threshold N] [--rule PREFIX=N ...] [--no-rules] [--l1-max-ttl 60s]
  set sampler --rate R
  top [--interval 1s] [--count N]   headline figures, redrawn in the terminal

It prints the server's JSON reply. On an error reply it prints the server's
message and exits 1.`

// ctlGets maps `ctl get` targets onto API paths.
var ctlGets = map[string]string{
	"config":    "config",
	"promotion": "promotion",
	"sampler":   "sampler",
	"tiers":     "tiers",
	"report":    "sampler/report",
}

// runCtl is `strata ctl`, the command-line client of the admin API.
func runCtl(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ctl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, ctlUsage); fs.PrintDefaults() }
	addr := fs.String("admin", admin.DefaultListen, "admin API `address` (host:port or http://host:port)")
	tokenFile := fs.String("token-file", "", "`file` holding the bearer token")
	timeout := fs.Duration("timeout", 10*time.Second, "how long to wait for the server")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c := &ctlClient{base: baseURL(*addr), http: &http.Client{Timeout: *timeout}}
	if *tokenFile != "" {
		tok, err := readToken(*tokenFile)
		if err != nil {
			return err
		}
		c.token = tok
	}
	rest := fs.Args()
	if len(rest) > 0 && rest[0] == "top" {
		return runTop(c, rest[1:], stdout, stderr)
	}
	if len(rest) < 2 {
		return fmt.Errorf("%w\n%s", errUsage, ctlUsage)
	}
	switch rest[0] {
	case "get":
		path, ok := ctlGets[rest[1]]
		if !ok || len(rest) > 2 {
			return fmt.Errorf("%w: get config|promotion|sampler|tiers|report", errUsage)
		}
		return c.call(http.MethodGet, path, nil, stdout)
	case "set":
		switch rest[1] {
		case "promotion":
			body, err := promotionBody(rest[2:], stderr)
			if err != nil {
				return err
			}
			return c.call(http.MethodPut, "promotion", body, stdout)
		case "sampler":
			body, err := samplerBody(rest[2:], stderr)
			if err != nil {
				return err
			}
			return c.call(http.MethodPut, "sampler", body, stdout)
		}
		return fmt.Errorf("%w: set promotion|sampler", errUsage)
	}
	return fmt.Errorf("%w: unknown command %q\n%s", errUsage, rest[0], ctlUsage)
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

// promotionBody builds a PUT body holding only the settings given, so the
// others keep their values on the server.
func promotionBody(args []string, stderr io.Writer) (map[string]any, error) {
	fs := flag.NewFlagSet("set promotion", flag.ContinueOnError)
	fs.SetOutput(stderr)
	threshold := fs.Int64("threshold", 0, "global promotion threshold `N` (1 promotes every L2 hit)")
	var rules ruleFlags
	fs.Var(&rules, "rule", "per-prefix threshold `PREFIX=N`; repeat it; replaces every rule")
	noRules := fs.Bool("no-rules", false, "remove every per-prefix rule")
	ttl := fs.String("l1-max-ttl", "", "longest life of a promoted copy in L1, e.g. `60s`")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	body := map[string]any{}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "threshold":
			body["threshold"] = *threshold
		case "l1-max-ttl":
			body["l1_max_ttl"] = *ttl
		}
	})
	switch {
	case *noRules && len(rules) > 0:
		return nil, fmt.Errorf("%w: --rule and --no-rules together", errUsage)
	case *noRules:
		body["rules"] = []admin.Rule{}
	case len(rules) > 0:
		body["rules"] = rules
	}
	if len(body) == 0 {
		return nil, fmt.Errorf("%w: set promotion needs --threshold, --rule, --no-rules or --l1-max-ttl", errUsage)
	}
	return body, nil
}

func samplerBody(args []string, stderr io.Writer) (map[string]any, error) {
	fs := flag.NewFlagSet("set sampler", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rate := fs.Int64("rate", -1, "sample one key in `R`; 0 turns sampling off")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "rate" })
	if !given || fs.NArg() > 0 {
		return nil, fmt.Errorf("%w: set sampler --rate R", errUsage)
	}
	// A negative rate is sent as it is: the server's refusal names the
	// field, as for every other client.
	return map[string]any{"rate": *rate}, nil
}

// ctlClient talks to one admin server.
type ctlClient struct {
	base  string
	token string
	http  *http.Client
}

func baseURL(addr string) string {
	if strings.HasPrefix(addr, "http://") || strings.HasPrefix(addr, "https://") {
		return strings.TrimSuffix(addr, "/")
	}
	return "http://" + addr
}

// call sends one request and prints the reply, indented. An error reply
// becomes an error carrying the server's message.
func (c *ctlClient) call(method, path string, body any, stdout io.Writer) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+"/admin/v1/"+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("admin API: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("admin API: reading the reply: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		var e struct{ Error, Field string }
		if json.Unmarshal(raw, &e) != nil || e.Error == "" {
			return fmt.Errorf("admin API: %s: %s", resp.Status, strings.TrimSpace(string(raw)))
		}
		if e.Field != "" {
			return fmt.Errorf("admin API: %s: %s: %s", resp.Status, e.Field, e.Error)
		}
		return fmt.Errorf("admin API: %s: %s", resp.Status, e.Error)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		out.Reset()
		out.Write(raw)
	}
	if out.Len() == 0 || out.Bytes()[out.Len()-1] != '\n' {
		out.WriteByte('\n')
	}
	_, err = stdout.Write(out.Bytes())
	return err
}
