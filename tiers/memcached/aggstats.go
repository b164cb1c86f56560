package memcached

import (
	"bufio"
	"context"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/strata-cache/strata/internal/tickgrid"
)

// ServerTotals sums memcached's item and memory stats over a pool's
// servers, so that strata's own stats reply can show, under memcached's
// names, what the pool holds (curr_items, bytes, limit_maxbytes,
// evictions, ..., and stats items and stats slabs per class), as a single
// memcached would.
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

	mu     sync.Mutex // guards sums, items, slabs, polled and answered
	sums   map[string]uint64
	items  classTotals       // "stats items", by class then field
	slabs  classTotals       // "stats slabs" per class fields
	slabG  map[string]uint64 // "stats slabs" totals: active_slabs, total_malloced
	polled bool
	// answered: servers that answered "stats" in the last round.
	answered int

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
		tk := tickgrid.NewTicker(t.interval) // on the process's timer grid
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
	items, slabs, slabG := classTotals{}, classTotals{}, map[string]uint64{}
	answered := 0
	for _, s := range t.pool.Stats().Servers {
		ms, _ := t.pool.fetchStats(s.Addr, pollCommands, t.timeout)
		if len(ms) == 0 {
			continue
		}
		answered++
		for _, k := range totalKeys {
			if v, err := strconv.ParseUint(ms[0][k], 10, 64); err == nil {
				sums[k] += v
			}
		}
		if len(ms) > 1 {
			for k, v := range ms[1] {
				// items:<class>:<field>
				if rest, ok := strings.CutPrefix(k, "items:"); ok {
					if c, f, ok := strings.Cut(rest, ":"); ok {
						items.add(c, f, v)
					}
				}
			}
		}
		if len(ms) > 2 {
			for k, v := range ms[2] {
				if c, f, ok := strings.Cut(k, ":"); ok {
					slabs.add(c, f, v)
				} else if n, err := strconv.ParseUint(v, 10, 64); err == nil && k == "total_malloced" {
					slabG[k] += n
				}
			}
		}
	}
	slabG["active_slabs"] = uint64(len(slabs))
	t.mu.Lock()
	t.sums, t.items, t.slabs, t.slabG, t.polled, t.answered = sums, items, slabs, slabG, true, answered
	t.mu.Unlock()
}

// Memory is the pool's memory as of the last round: bytes in use and
// limit_maxbytes, each summed over the servers that answered it. ok is
// false before the first round and when no server answered the last one
// (or none has a limit): the pool's size is then unknown.
func (t *ServerTotals) Memory() (used, limit uint64, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.polled || t.answered == 0 || t.sums["limit_maxbytes"] == 0 {
		return 0, 0, false
	}
	return t.sums["bytes"], t.sums["limit_maxbytes"], true
}

// classTotals sums per slab class figures over servers: class id → field →
// value. Sizes and ages are not summed: two servers' classes have the same
// chunk size, and the oldest item is the oldest of either.
type classTotals map[int]map[string]uint64

// notSummed are the per-class fields combined with max.
var notSummed = map[string]bool{"chunk_size": true, "chunks_per_page": true, "age": true, "age_hot": true, "age_warm": true, "evicted_time": true}

func (ct classTotals) add(class, field, value string) {
	id, err := strconv.Atoi(class)
	if err != nil {
		return
	}
	v, err := strconv.ParseUint(value, 10, 64)
	if err != nil {
		return
	}
	m := ct[id]
	if m == nil {
		m = map[string]uint64{}
		ct[id] = m
	}
	if notSummed[field] {
		m[field] = max(m[field], v)
	} else {
		m[field] += v
	}
}

// append writes the classes in id order, each field in name order, as
// "STAT <prefix><class>:<field> <value>".
func (ct classTotals) append(dst []byte, prefix string) []byte {
	ids := make([]int, 0, len(ct))
	for id := range ct {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		fields := make([]string, 0, len(ct[id]))
		for f := range ct[id] {
			fields = append(fields, f)
		}
		slices.Sort(fields)
		for _, f := range fields {
			dst = appendLine(dst, prefix+strconv.Itoa(id)+":"+f, ct[id][f])
		}
	}
	return dst
}

func appendLine(dst []byte, name string, v uint64) []byte {
	dst = append(dst, "STAT "...)
	dst = append(dst, name...)
	dst = append(dst, ' ')
	dst = strconv.AppendUint(dst, v, 10)
	return append(dst, "\r\n"...)
}

// AppendItemStats appends "stats items" summed over the servers.
func (t *ServerTotals) AppendItemStats(dst []byte) []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.items.append(dst, "items:")
}

// AppendSlabStats appends "stats slabs" summed over the servers.
func (t *ServerTotals) AppendSlabStats(dst []byte) []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	dst = t.slabs.append(dst, "")
	dst = appendLine(dst, "active_slabs", t.slabG["active_slabs"])
	return appendLine(dst, "total_malloced", t.slabG["total_malloced"])
}

// pollCommands are what a round asks each server, in this order, on one
// connection: with thousands of stratas, or TLS to the servers, a
// connection (and handshake) per command would be most of the poll's cost,
// to them and to an idle strata.
var pollCommands = []string{"stats", "stats items", "stats slabs"}

// fetchStats sends the stats commands cmds to a server on one connection,
// all in one write, and reads their replies in order: the replies read
// before an error are returned with it.
func (p *Pool) fetchStats(addr string, cmds []string, timeout time.Duration) ([]map[string]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, err := p.dialServer(ctx, addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte(strings.Join(cmds, "\r\n") + "\r\n")); err != nil {
		return nil, err
	}
	r := bufio.NewReader(c)
	out := make([]map[string]string, 0, len(cmds))
	for range cmds {
		m, err := readStats(r, addr)
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
	return out, nil
}

// readStats reads one stats reply, up to its END.
func readStats(r *bufio.Reader, addr string) (map[string]string, error) {
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
		dst = appendLine(dst, k, t.sums[k])
	}
	return dst
}
