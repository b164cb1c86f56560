package conformance

import (
	"bytes"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
)

const (
	longLine  = 10 << 20 // bytes sent without a newline
	heapSlack = 32 << 20 // growth of the heap in use the server may cause
)

// heapSampler records the largest HeapInuse seen until stopped, so that a
// server which buffers the whole line and frees it before the test looks is
// still caught.
type heapSampler struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex // guards peak
	peak uint64
}

func startHeapSampler() *heapSampler {
	s := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			s.sample()
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *heapSampler) sample() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s.mu.Lock()
	s.peak = max(s.peak, ms.HeapInuse)
	s.mu.Unlock()
}

// Stop ends sampling and returns the peak.
func (s *heapSampler) Stop() uint64 {
	close(s.stop)
	<-s.done
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

func heapInuse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// sendLongLine writes a line of longLine bytes without a newline and reads
// until the server hangs up.
func sendLongLine(t *testing.T, addr string, line []byte) (reply []byte, closed bool) {
	t.Helper()
	c := dial(t, addr)
	done := writeAsync(c.conn, line, 0, time.Now().Add(10*time.Second))
	reply, closed = readToClose(c.conn, time.Now().Add(10*time.Second))
	<-done // the write fails once the server hangs up; that is expected
	return reply, closed
}

func TestLongLine(t *testing.T) {
	ref := memcachedtest.Start(t).Addr
	forEachTarget(t, func(t *testing.T, addr string) { testLongLine(t, ref, addr) })
}

func testLongLine(t *testing.T, ref, addr string) {
	line := bytes.Repeat([]byte("x"), longLine)

	// A connection opened before the attack must keep working after it.
	bystander := dial(t, addr)
	mustWork(t, bystander, "longline:before")

	wantReply, wantClosed := sendLongLine(t, ref, line)
	if !wantClosed {
		t.Fatalf("the reference memcached kept the connection open after a %d-byte line", longLine)
	}

	before := heapInuse()
	sampler := startHeapSampler()
	reply, closed := sendLongLine(t, addr, line)
	peak := sampler.Stop()
	after := heapInuse()
	runtime.KeepAlive(line)

	if !closed {
		t.Errorf("strata kept the connection open after a %d-byte line without a newline; memcached closes it", longLine)
	}
	if !bytes.Equal(reply, wantReply) {
		t.Errorf("before closing, strata sent\n%smemcached sent\n%s", show(reply), show(wantReply))
	}
	if inProcess {
		if peak > before+heapSlack {
			t.Errorf("heap in use peaked at %d MiB, %d MiB above the %d MiB before the line (limit +%d MiB)",
				peak>>20, (peak-before)>>20, before>>20, heapSlack>>20)
		}
		if after > before+heapSlack {
			t.Errorf("heap in use is %d MiB after the line, %d MiB before", after>>20, before>>20)
		}
	} else {
		t.Logf("server under test is out of process; heap check skipped (test process: %d MiB before, peak %d MiB)", before>>20, peak>>20)
	}

	mustWork(t, bystander, "longline:bystander")
	mustWork(t, dial(t, addr), "longline:after")
}
