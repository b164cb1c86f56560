package proxy_test

import (
	"bufio"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/proxytest"
	"github.com/strata-cache/strata/tiers"
)

// racing is an ordered tier whose reads race as a layered read does. The
// first read of the key is held in flight, as a read that missed L1 and
// waits for L2. Any read of that key answered meanwhile finds L1's copy
// of the old value, and once the first read answers (having removed that
// copy) every read finds the new one. Reads of other keys answer at once.
type racing struct {
	loops *proxy.Loops
	key   string
	first chan struct{} // closed when the first read of key arrives

	mu    sync.Mutex
	held  *tiers.Op
	reads []string // keys in the order Do saw them
}

var _ tiers.Tier = (*racing)(nil)

func (t *racing) Phase(r *tiers.Request) uint8 {
	if r.Kind == tiers.KindGet {
		return 1
	}
	return 2
}

func (t *racing) Do(op *tiers.Op) {
	key := string(op.Req.Key)
	t.mu.Lock()
	t.reads = append(t.reads, key)
	first := key == t.key && len(t.reads) == 1
	value := "new"
	if first {
		t.held = op
	} else if key == t.key && t.held != nil {
		value = "old"
	}
	t.mu.Unlock()
	if first {
		close(t.first)
		return
	}
	answer(op, value)
}

// release answers the held read, on its loop as a pool would.
func (t *racing) release() {
	t.mu.Lock()
	op := t.held
	t.held = nil
	t.mu.Unlock()
	t.loops.Run(op.Loop, func() { answer(op, "new") })
}

func (t *racing) seen() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.reads...)
}

func answer(op *tiers.Op, value string) {
	op.Res.Status = tiers.StatusHit
	op.Res.Value = append(op.Res.Value[:0], value...)
	op.Done(op)
}

// TestPipelinedGetsOfOneKeyNeverGoBack: of two gets of one key pipelined
// together, the second never answers an older value than the first, as
// with memcached, which runs them one after the other; a get of another
// key pipelined between them is not held back.
func TestPipelinedGetsOfOneKeyNeverGoBack(t *testing.T) {
	cfg := proxy.Config{Listen: "127.0.0.1:0", Loops: 1}
	loops := proxytest.Loops(t, cfg)
	if err := loops.Join(idleUser{}); err != nil { // the server orders requests once a pool may answer after Do
		t.Fatal(err)
	}
	tier := &racing{loops: loops, key: "k", first: make(chan struct{})}
	srv := proxytest.Start(t, cfg, tier, loops)

	c, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("get k\r\nget other\r\nget k\r\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-tier.first:
	case <-time.After(10 * time.Second):
		t.Fatal("the first get never reached the tier")
	}
	// The get of the other key goes out while the first is in flight; the
	// second get of k does not.
	deadline := time.Now().Add(10 * time.Second)
	for len(tier.seen()) < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := tier.seen(); len(got) != 2 || got[1] != "other" {
		t.Fatalf("reads issued while the first get of k was in flight: %q, want [k other]", got)
	}
	tier.release()

	rd := bufio.NewReader(c)
	var values []string
	for len(values) < 3 {
		vals, err := readValues(rd)
		if err != nil {
			t.Fatal(err)
		}
		values = append(values, vals...)
	}
	if want := []string{"new", "new", "new"}; !slices.Equal(values, want) {
		t.Errorf("values answered %q, want %q (a later get of k older than an earlier one)", values, want)
	}
	if got := tier.seen(); len(got) != 3 {
		t.Errorf("reads issued: %q, want three", got)
	}
}

// readValues reads one get reply and returns the values of its VALUE
// lines.
func readValues(rd *bufio.Reader) ([]string, error) {
	var values []string
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return values, err
		}
		if line == "END\r\n" {
			return values, nil
		}
		value, err := rd.ReadString('\n')
		if err != nil {
			return values, err
		}
		values = append(values, value[:len(value)-2])
	}
}
