package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-cache/strata/config"

	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/internal/testbin"
)

// Each pathological input is refused by the rules checked before the TOML
// decoder runs: the error names the limit, which only the pre-scan or the
// size check reports (the decoder would take seconds and a gigabyte).
func TestConfigInputRefusedBeforeDecoding(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"a value of 1 MB of [", "[promotion]\nthreshold = " + strings.Repeat("[", 1_000_000) + "\n", ":2: nesting over the limit of 32"},
		{"an 80 KB dotted table header", "[" + strings.TrimSuffix(strings.Repeat("a.", 40_000), ".") + "]\n", ":1: key parts over the limit of 16"},
		{"a 1 MB key", strings.Repeat("k", 1_000_000) + " = 1\n", ":1: key length over the limit of 256"},
		{"a 1 MB quoted key", `"` + strings.Repeat("k", 1_000_000) + "\" = 1\n", ":1: key length over the limit of 256"},
		{"a file over 1 MiB", "# " + strings.Repeat("x", config.MaxFileBytes) + "\n[promotion]\nthreshold = 8\n", "over the limit of 1048576 bytes"},
	} {
		path := writeFile(t, "big.toml", c.body)
		_, err := config.Load(path, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %.300v, want %q", c.name, err, c.want)
		}
		if err != nil && len(err.Error()) > 400 {
			t.Errorf("%s: the error repeats the input: %d bytes", c.name, len(err.Error()))
		}
	}
}

// Within the limits, what the schema needs passes the pre-scan: brackets
// and dots in strings and comments count for nothing.
func TestConfigInputWithinBounds(t *testing.T) {
	body := "# [[[[ a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s\n[promotion]\nthreshold = 8\n" +
		"[[promotion.rule]]\nprefix = \"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q\"\nthreshold = 4\n"
	if _, err := config.Load(writeFile(t, "ok.toml", body), nil); err != nil {
		t.Fatal(err)
	}
}

// A long key or value is named by its first characters in an error.
func TestConfigErrorsClipLongInput(t *testing.T) {
	long := strings.Repeat("x", 100_000)
	_, err := config.Load(writeFile(t, "long.toml", "[l1]\nmax_ttl = \""+long+"\"\n"), nil)
	if err == nil || len(err.Error()) > 400 || !strings.Contains(err.Error(), strings.Repeat("x", 60)) || !strings.Contains(err.Error(), "…") {
		t.Fatalf("%.400v (%d bytes)", err, len(err.Error()))
	}
}

// A file that sets no key is refused at start and by `config check`, as
// on SIGHUP (TestSIGHUPWithEmptyFileKeepsSettings): one rule for all
// three. No file at all means the defaults.
func TestConfigEmptyFileRefusedEverywhere(t *testing.T) {
	for _, body := range []string{"", "\n  \n", "# only a comment\n\n#another\n"} {
		path := writeFile(t, "empty.toml", body)
		if _, err := config.Load(path, nil); err == nil || !strings.Contains(err.Error(), "sets no key") {
			t.Errorf("start with %q: %v", body, err)
		}
		var out, errOut strings.Builder
		if err := config.Command([]string{"check", path}, &out, &errOut); err == nil || !strings.Contains(errOut.String(), "sets no key") {
			t.Errorf("config check of %q: %v %q", body, err, errOut.String())
		}
	}
	if _, err := config.Load("", nil); err != nil {
		t.Fatalf("no file: %v", err)
	}
}

// A SIGHUP with a file of 1 MB of '[' is refused without growing the
// running strata's memory by more than the file.
func TestSIGHUPWithPathologicalFileKeepsMemory(t *testing.T) {
	bin := testbin.BuildStrata(t)
	cfg := writeFile(t, "strata.toml", "[promotion]\nthreshold = 8\n")
	p := startProcess(t, bin, cfg)
	before := vmRSS(t, p.cmd.Process.Pid)
	rewrite(t, cfg, "[promotion]\nthreshold = "+strings.Repeat("[", 1_000_000)+"\n")
	start := time.Now()
	p.signal(t, syscall.SIGHUP)
	poll.Until(t, 10*time.Second, "the reload to be rejected", func() bool {
		return strings.Contains(p.stderr.String(), "nesting over the limit")
	})
	took := time.Since(start)
	after := vmRSS(t, p.cmd.Process.Pid)
	t.Logf("SIGHUP with 1 MB of '[': refused in %v, VmRSS %d kB → %d kB", took, before, after)
	if after-before > 50<<10 {
		t.Fatalf("VmRSS grew from %d kB to %d kB", before, after)
	}
	if n := promotionThreshold(t, p.admin); n != 8 {
		t.Fatalf("threshold after the rejected reload: %d", n)
	}
	p.signal(t, syscall.SIGTERM)
	if code := p.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("exit status %d\n%s", code, p.stderr.String())
	}
}

// vmRSS is the resident set of process pid, in kB.
func vmRSS(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatalf("VmRSS %q", v)
			}
			return n
		}
	}
	t.Fatal("no VmRSS")
	return 0
}
