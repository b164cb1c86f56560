package conformance

import (
	"github.com/strata-cache/strata/internal/testbin"

	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// minCapableTests is how many ASCII tests memccapable of libmemcached 1.1
// runs, and how many binary ones; fewer would mean a tool that tests less
// than the issue counts on.
const minCapableTests = 27

// capableResult is memccapable's verdict. The tool (libmemcached 1.1)
// prints, on stdout, each test's name padded to 40 columns and then "[pass]"
// or "[skip]" and a newline, and "All tests passed" at the end. A failing
// test's "[FAIL]" goes to stderr instead, preceded by whatever unexpected
// reply the tool got, and so does the summary "N of M tests failed"; on
// stdout the failing test's name is directly followed by the next name.
type capableResult struct {
	passed, failed, skipped []string
	failReports             int    // "[FAIL]" lines on stderr
	summary                 string // "All tests passed" or "N of M tests failed"
	garbled                 bool   // stdout did not follow the format above
}

const capableNameWidth = 40

var capableFailed = regexp.MustCompile(`^(\d+) of (\d+) tests failed$`)

func parseCapable(stdout, stderr []byte) capableResult {
	var r capableResult
	s := string(stdout)
	name, pending := "", false
	for len(s) > 0 {
		switch {
		case strings.HasPrefix(s, "[pass]\n"), strings.HasPrefix(s, "[skip]\n"):
			if !pending {
				r.garbled = true
			} else if s[1] == 'p' {
				r.passed = append(r.passed, name)
			} else {
				r.skipped = append(r.skipped, name)
			}
			pending = false
			s = s[len("[pass]\n"):]
		case strings.HasPrefix(s, "All tests passed"):
			line, rest, _ := strings.Cut(s, "\n")
			r.summary, s = line, rest
		default:
			if pending {
				r.failed = append(r.failed, name) // its verdict went to stderr
			}
			field := s[:min(capableNameWidth, len(s))]
			if len(field) < capableNameWidth || field[capableNameWidth-1] != ' ' {
				r.garbled = true
			}
			name, pending = strings.TrimSpace(field), true
			s = s[len(field):]
		}
	}
	if pending {
		r.failed = append(r.failed, name)
	}
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "[FAIL]" {
			r.failReports++
		}
		if capableFailed.MatchString(line) {
			r.summary = line
		}
	}
	return r
}

func TestMemccapable(t *testing.T) {
	runMemccapable(t, startStrata(t))
}

func TestMemccapableBinary(t *testing.T) {
	runMemccapableMode(t, startStrata(t), "-b")
}

// runMemccapable runs memccapable's ASCII tests against addr and fails t
// unless every one of them, at least minCapableTests, passed.
func runMemccapable(t *testing.T, addr string) { runMemccapableMode(t, addr, "-a") }

// runMemccapableMode runs memccapable's tests of one protocol (mode -a
// for ASCII, -b for binary) against addr, as runMemccapable does.
func runMemccapableMode(t *testing.T, addr, mode string) {
	t.Helper()
	bin := testbin.Require(t, "libmemcached-tools", "STRATA_SKIP_MEMCACHED", "memccapable")
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// -a/-b: one protocol only; -t: seconds before an I/O wait counts as failed.
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, mode, "-t", "5", "-h", host, "-p", port)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	r := parseCapable(stdout.Bytes(), stderr.Bytes())
	total := len(r.passed) + len(r.failed) + len(r.skipped)
	if runErr != nil || r.garbled || len(r.failed) > 0 || r.failReports > 0 || len(r.skipped) > 0 ||
		len(r.passed) != total || total < minCapableTests || r.summary != "All tests passed" {
		t.Fatalf("memccapable %s: %d of %d passed (want all, at least %d); failed %q, skipped %q, summary %q, exit %v\nstdout:\n%s\nstderr:\n%s",
			mode, len(r.passed), total, minCapableTests, r.failed, r.skipped, r.summary, runErr, stdout.Bytes(), stderr.Bytes())
	}
	t.Logf("memccapable %s: %d/%d passed", mode, len(r.passed), total)
}

func TestParseCapable(t *testing.T) {
	pad := func(name string) string { return fmt.Sprintf("%-40s", name) }
	pass := pad("ascii version") + "[pass]\n" + pad("ascii quit") + "[pass]\nAll tests passed\n"
	r := parseCapable([]byte(pass), nil)
	if len(r.passed) != 2 || r.passed[1] != "ascii quit" || len(r.failed) != 0 || r.garbled || r.summary != "All tests passed" {
		t.Errorf("parse of a passing run: %+v", r)
	}
	// The shape of a real failing run (memcached -F refuses flush_all).
	out := pad("ascii mget") + "[pass]\n" + pad("ascii flush") + pad("ascii flush noreply") + pad("ascii add") + "[pass]\n" +
		pad("ascii stat") + "[pass]\n"
	errs := "[CLIENT_ERROR flush_all not allowed\r\n]\n[FAIL]\n[FAIL]\n2 of 5 tests failed\n"
	r = parseCapable([]byte(out), []byte(errs))
	if len(r.passed) != 3 || len(r.failed) != 2 || r.failed[0] != "ascii flush" || r.failed[1] != "ascii flush noreply" ||
		r.failReports != 2 || r.garbled || r.summary != "2 of 5 tests failed" {
		t.Errorf("parse of a failing run: %+v", r)
	}
	// A last test whose verdict never came is a failure, not a pass.
	r = parseCapable([]byte(pad("ascii version")+"[pass]\n"+pad("ascii stat")), nil)
	if len(r.failed) != 1 || r.failed[0] != "ascii stat" {
		t.Errorf("parse of a cut-off run: %+v", r)
	}
	if r = parseCapable([]byte("something else entirely\n"), nil); !r.garbled {
		t.Errorf("parse of unrelated output: %+v, want garbled", r)
	}
}
