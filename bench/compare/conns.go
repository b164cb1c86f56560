package compare

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"time"

	"github.com/strata-cache/strata/bench/proc"
)

// ConnsRow is one target's memory with Config.IdleConns idle client
// connections open: the resident set of the process under test just before
// they connect and once every one of them has had a reply and sits idle.
type ConnsRow struct {
	Target    string  `json:"target"`
	Conns     int     `json:"conns"`
	RSSBefore int64   `json:"rss_before_bytes"`
	RSSAfter  int64   `json:"rss_after_bytes"`
	PerConn   float64 `json:"rss_bytes_per_conn"`
	Err       string  `json:"error,omitempty"`
}

// connsProbe is the request each idle connection sends once, so the server
// has set the connection up as fully as a client that did some work and
// then went quiet would find it; a get, because twemproxy has no version.
const connsProbe = "get strata-bench-idle\r\n"

// measureConns opens n connections to the target, sends one get on each
// and reads its reply, waits settle for the server to finish whatever the
// burst started, and reads the process's RSS before and after. The
// connections are closed before it returns.
func measureConns(ctx context.Context, n int, settle time.Duration, t *topology) ConnsRow {
	row := ConnsRow{Target: t.name, Conns: n}
	fail := func(err error) ConnsRow {
		row.Err = err.Error()
		return row
	}
	before, err := proc.RSS(t.proxy.Pid())
	if err != nil {
		return fail(err)
	}
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	var d net.Dialer
	br := bufio.NewReaderSize(nil, 64)
	for i := 0; i < n; i++ {
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
		c, err := d.DialContext(ctx, "tcp", t.addr)
		if err != nil {
			return fail(fmt.Errorf("connection %d of %d: %w (is ulimit -n above twice the count?)", i+1, n, err))
		}
		conns = append(conns, c)
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte(connsProbe)); err != nil {
			return fail(fmt.Errorf("connection %d of %d: %w", i+1, n, err))
		}
		br.Reset(c)
		line, err := br.ReadString('\n')
		if err != nil || line != "END\r\n" {
			return fail(fmt.Errorf("connection %d of %d: reply %q, %v", i+1, n, line, err))
		}
	}
	select {
	case <-ctx.Done():
		return fail(ctx.Err())
	case <-time.After(settle):
	}
	after, err := proc.RSS(t.proxy.Pid())
	if err != nil {
		return fail(err)
	}
	row.RSSBefore, row.RSSAfter = before, after
	if n > 0 {
		row.PerConn = float64(after-before) / float64(n)
	}
	return row
}
