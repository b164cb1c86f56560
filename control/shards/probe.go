package shards

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// Wire talks to the tier's memcached servers directly, outside the data
// plane: the leader's own probe (its half of the evidence that a server is
// dead) and the flush of a returning server. Each call dials, asks one
// question and closes, so a hung server costs one timeout, never a
// connection the data plane needs.
type Wire struct {
	Timeout time.Duration
}

var _ Flusher = Wire{}

// Probe reports whether addr answers "version" within the timeout.
func (w Wire) Probe(ctx context.Context, addr string) bool {
	line, err := w.ask(ctx, addr, "version\r\n")
	return err == nil && strings.HasPrefix(line, "VERSION ")
}

// Flush empties addr with flush_all.
func (w Wire) Flush(ctx context.Context, addr string) error {
	line, err := w.ask(ctx, addr, "flush_all\r\n")
	if err != nil {
		return err
	}
	if line != "OK" {
		return fmt.Errorf("flush_all at %s: %q", addr, line)
	}
	return nil
}

// ProbeAll probes every address concurrently and waits for all.
func (w Wire) ProbeAll(ctx context.Context, addrs []string) map[string]bool {
	out := make(map[string]bool, len(addrs))
	var mu sync.Mutex // guards out
	var wg sync.WaitGroup
	for _, a := range addrs {
		wg.Add(1)
		go func(a string) {
			defer wg.Done()
			ok := w.Probe(ctx, a)
			mu.Lock()
			out[a] = ok
			mu.Unlock()
		}(a)
	}
	wg.Wait()
	return out
}

func (w Wire) ask(ctx context.Context, addr, req string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, w.Timeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	dl, _ := ctx.Deadline()
	_ = c.SetDeadline(dl)
	if _, err := c.Write([]byte(req)); err != nil {
		return "", err
	}
	line, err := bufio.NewReaderSize(c, 256).ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}
