package conformance

import (
	"bytes"
	"flag"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
)

var showReplies = flag.Bool("conformance.show", false, "log the reference memcached's reply to every step of the differential table")

const (
	// stepTimeout bounds one step: writing it and reading its reply.
	stepTimeout = 3 * time.Second
	// closeWait is how long a closing case waits for the server to hang up.
	closeWait = 2 * time.Second
)

// sentinel follows every step that does not close the connection; its MN
// reply marks the end of the step's replies.
var sentinel = []byte("mn\r\n")

// outcome is what one step got back from one server.
type outcome struct {
	reply  []byte // without the sentinel's MN
	closed bool   // the server closed the connection (closing steps only)
	err    error  // the reply could not be read to its end
}

func TestDifferential(t *testing.T) {
	runTable(t, startStrata(t), nil)
}

// runTable replays testdata/exchanges.txt against a reference memcached it
// starts and the server at sut, one subtest per case. Tests of strata over
// other tiers (memcached pools) call it with their own server. known names
// the cases this setup is known to answer differently, with the reason; such
// a case must still differ, so the list cannot outlive the difference.
func runTable(t *testing.T, sut string, known map[string]string) {
	t.Helper()
	cases, err := parseCases(filepath.Join("testdata", "exchanges.txt"))
	if err != nil {
		t.Fatal(err)
	}
	ref := memcachedtest.Start(t).Addr
	now := time.Now().Unix()
	began := time.Now()
	for i, c := range cases {
		// Every case gets its own key namespace so no case sees another's
		// keys; the prefix is the same on both servers so replies that echo
		// keys stay comparable.
		prefix := fmt.Sprintf("t%04d", i)
		t.Run(c.name, func(t *testing.T) {
			want, diff, err := diffCase(ref, sut, c, prefix, now)
			if err != nil {
				t.Fatal(err)
			}
			if *showReplies {
				for i, o := range want {
					t.Logf("step %d (line %d):\n%s", i+1, c.steps[i].line, show(o.reply))
				}
			}
			if reason, ok := known[c.name]; ok {
				if diff == "" {
					t.Errorf("now answers like memcached: drop it from the known differences (%s)", reason)
				} else {
					t.Logf("known difference: %s", reason)
				}
				return
			}
			if diff != "" {
				t.Error(diff)
			}
		})
	}
	t.Logf("%d cases in %v", len(cases), time.Since(began).Round(time.Millisecond))
}

// diffCase plays c against the reference memcached at ref and the server
// under test at sut. It returns the reference's outcomes and a description
// of the first step whose replies differ ("" when none does). The error is
// for a case the reference itself cannot run: a defect of the table.
func diffCase(ref, sut string, c *testCase, prefix string, now int64) ([]outcome, string, error) {
	want, err := runCase(ref, c, &expandEnv{prefix: prefix, now: now})
	if err != nil {
		return nil, "", fmt.Errorf("case %s (exchanges.txt:%d) cannot run against the reference memcached: %w", c.name, c.line, err)
	}
	for i, w := range want {
		if w.err != nil {
			return want, "", fmt.Errorf("case %s step %d: the reference memcached's reply is unreadable (fix the table): %w\n%s", c.name, i+1, w.err, show(w.reply))
		}
	}
	if len(want) != len(c.steps) || (c.closes && !want[len(want)-1].closed) {
		return want, "", fmt.Errorf("case %s: the reference memcached closed the connection early or not at all (fix the table)", c.name)
	}
	got, err := runCase(sut, c, &expandEnv{prefix: prefix, now: now})
	if err != nil {
		return want, "", fmt.Errorf("case %s (exchanges.txt:%d): %w", c.name, c.line, err)
	}
	for i, w := range want {
		var g outcome
		if i < len(got) {
			g = got[i]
		} else {
			g.err = fmt.Errorf("step not run: the connection ended at an earlier step")
		}
		if g.err == nil && g.closed == w.closed && sameReply(w.reply, g.reply) {
			continue
		}
		return want, fmt.Sprintf("case %s (exchanges.txt:%d), step %d of %d (line %d) differs\nrequest:\n%smemcached replied%s:\n%sstrata replied%s:\n%s%s",
			c.name, c.line, i+1, len(c.steps), c.steps[i].line,
			showRequest(c, i, prefix, now),
			closedNote(w), show(w.reply), closedNote(g), show(g.reply), errNote(g.err)), nil
	}
	return want, "", nil
}

// runCase plays one case on a fresh connection. A step that cannot be
// built (${cas} when the server returned no CAS) or whose reply cannot be
// read ends the case with that step's outcome holding the error.
func runCase(addr string, c *testCase, env *expandEnv) ([]outcome, error) {
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	defer conn.Close()
	var outs []outcome
	for i, s := range c.steps {
		req, err := env.expand(s.src)
		if err != nil {
			outs = append(outs, outcome{err: fmt.Errorf("cannot build the request of line %d: %w", s.line, err)})
			break
		}
		var o outcome
		deadline := time.Now().Add(stepTimeout)
		if i == len(c.steps)-1 && c.closes {
			done := writeAsync(conn, req, c.chunk, deadline)
			o.reply, o.closed = readToClose(conn, time.Now().Add(closeWait))
			<-done // a write error is expected once the server hangs up
		} else {
			req = append(req, sentinel...)
			done := writeAsync(conn, req, c.chunk, deadline)
			o.reply, o.err = readReply(conn, countNoops(req), deadline)
			if werr := <-done; werr != nil && o.err == nil {
				o.err = fmt.Errorf("write: %w", werr)
			}
			if o.err == nil {
				o.reply = bytes.TrimSuffix(o.reply, []byte("MN\r\n"))
			}
		}
		env.cas = append(env.cas, normalize(o.reply).cas...)
		outs = append(outs, o)
		if o.err != nil || o.closed {
			break
		}
	}
	return outs, nil
}

// writeAsync writes req while the caller reads, so a server that answers
// before it has read everything can never deadlock the exchange. With
// chunk > 0 each piece is a separate write, to exercise partial requests.
func writeAsync(c net.Conn, req []byte, chunk int, deadline time.Time) <-chan error {
	done := make(chan error, 1)
	_ = c.SetWriteDeadline(deadline)
	go func() {
		if chunk <= 0 {
			_, err := c.Write(req)
			done <- err
			return
		}
		for len(req) > 0 {
			n := min(chunk, len(req))
			if _, err := c.Write(req[:n]); err != nil {
				done <- err
				return
			}
			req = req[n:]
		}
		done <- nil
	}()
	return done
}

func showRequest(c *testCase, i int, prefix string, now int64) string {
	// ${cas} values differ per server; show the template for those steps.
	env := &expandEnv{prefix: prefix, now: now, cas: []uint64{0}}
	req, err := env.expand(c.steps[i].src)
	if err != nil || strings.Contains(c.steps[i].src, "${cas") {
		return "    " + c.steps[i].src + "   (template)\n"
	}
	var sb strings.Builder
	for _, line := range bytes.SplitAfter(req, []byte("\n")) {
		if len(line) > 0 {
			fmt.Fprintf(&sb, "    %s\n", quoteCapped(line))
		}
	}
	return sb.String()
}

func closedNote(o outcome) string {
	if o.closed {
		return " and closed the connection"
	}
	return ""
}

func errNote(err error) string {
	if err == nil {
		return ""
	}
	return fmt.Sprintf("and then: %v\n", err)
}
