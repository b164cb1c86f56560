package memcached

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ServerTotals sums memcached's item and memory stats over a pool's
// servers, so that strata's own stats reply can show, under memcached's
// names, what the pool holds (curr_items, bytes, limit_maxbytes,
// evictions, ...), as a single memcached would.
//
// The servers are asked on a side connection of its own, never on the
// data plane's: Start polls once (bounded by the timeout), then a
// goroutine owned by the ServerTotals polls every interval until Stop.
// A server that does not answer in time is left out of that round; the
// figures are as old as the last round, at most interval.
type ServerTotals struct {
	pool     *Pool
	interval time.Duration
	timeout  time.Duration

	mu     sync.Mutex // guards sums and polled
	sums   map[string]uint64
	polled bool

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// totalKeys are the general stats summed over the servers: the ones about
// items and memory, which strata's data plane cannot know for a pool.
var totalKeys = []string{
	"get_expired", "get_flushed", "store_too_large", "store_no_memory",
	"limit_maxbytes", "bytes", "curr_items", "total_items",
	"expired_unfetched", "evicted_unfetched", "evicted_active", "evictions", "reclaimed",
	"crawler_reclaimed", "crawler_items_checked", "lrutail_reflocked",
	"moves_to_cold", "moves_to_warm", "moves_within_lru", "direct_reclaims",
	"lru_crawler_starts", "lru_bumps_dropped",
}

// NewServerTotals prepares the totals of p's servers, polled every
// interval with timeout per server.
func NewServerTotals(p *Pool, interval, timeout time.Duration) *ServerTotals {
	return &ServerTotals{pool: p, interval: interval, timeout: timeout, stop: make(chan struct{}), done: make(chan struct{})}
}

// Start polls once and then every interval in the background.
func (t *ServerTotals) Start() {
	t.poll()
	go func() {
		defer close(t.done)
		tk := time.NewTicker(t.interval)
		defer tk.Stop()
		for {
			select {
			case <-t.stop:
				return
			case <-tk.C:
				t.poll()
			}
		}
	}()
}

// Stop ends the polling and waits for the goroutine; it is idempotent. A
// ServerTotals never started must not be stopped.
func (t *ServerTotals) Stop() {
	t.once.Do(func() { close(t.stop) })
	<-t.done
}

// Poll asks the servers now, as the background round does.
func (t *ServerTotals) Poll() { t.poll() }

func (t *ServerTotals) poll() {
	sums := make(map[string]uint64, len(totalKeys))
	for _, s := range t.pool.Stats().Servers {
		m, err := fetchStats(s.Addr, t.timeout)
		if err != nil {
			continue
		}
		for _, k := range totalKeys {
			if v, err := strconv.ParseUint(m[k], 10, 64); err == nil {
				sums[k] += v
			}
		}
	}
	t.mu.Lock()
	t.sums, t.polled = sums, true
	t.mu.Unlock()
}

// fetchStats reads one server's general stats.
func fetchStats(addr string, timeout time.Duration) (map[string]string, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte("stats\r\n")); err != nil {
		return nil, err
	}
	r := bufio.NewReader(c)
	m := map[string]string{}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "END" {
			return m, nil
		}
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 || f[0] != "STAT" {
			return nil, &net.AddrError{Err: "unexpected stats line " + strconv.Quote(line), Addr: addr}
		}
		m[f[1]] = f[2]
	}
}

// AppendStats appends the totals under memcached's names, each line
// once the first poll is done (zero where no server answered).
func (t *ServerTotals) AppendStats(dst []byte) []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.polled {
		return dst
	}
	for _, k := range totalKeys {
		dst = append(dst, "STAT "...)
		dst = append(dst, k...)
		dst = append(dst, ' ')
		dst = strconv.AppendUint(dst, t.sums[k], 10)
		dst = append(dst, "\r\n"...)
	}
	return dst
}
