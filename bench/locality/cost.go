package locality

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/strata-cache/strata/bench/proc"
	"github.com/strata-cache/strata/control/locality/keyrule"
	"github.com/strata-cache/strata/control/locality/loctable"
)

// Two figures the issue asks for besides the placements': what a
// forwarded request costs the forwarding strata in CPU against a local L2
// request, and how much the location table takes in etcd per μ-shard.
// Both are read from the strata placement's topology after its day.

// ForwardCost is region a's strata's CPU per request, its own L2 against
// forwarded to b, with a constant background (counters, the control
// loops) measured idle first and taken off; the median of Rounds
// alternating bursts of each kind.
type ForwardCost struct {
	LocalUs     float64 `json:"local_cpu_us_per_request"`
	ForwardedUs float64 `json:"forwarded_cpu_us_per_request"`
	Ratio       float64 `json:"forwarded_over_local"`
	Requests    int     `json:"requests_each"` // per kind and round
	Rounds      int     `json:"rounds"`
}

// forwardCost pins a few of a's users to a and of b's to b (so the load
// below moves nothing), writes their keys, then sends the same number of
// gets of each kind to a over pipelined connections, reading a's CPU time
// and its local and forwarded counts around each burst.
func forwardCost(ctx context.Context, cfg *Config, rules *keyrule.Rules, t *topology) (*ForwardCost, error) {
	d := cfg.day()
	a, b := t.regions[0], t.regions[1]
	var local, remote []string
	for i := range min(8, d.Users/2) {
		lu, ru := 2*i, d.Users+i // a's stay-at-home users, b's users
		if err := pin(ctx, a.admin, muName(rules, lu), a.name); err != nil {
			return nil, err
		}
		if err := pin(ctx, a.admin, muName(rules, ru), b.name); err != nil {
			return nil, err
		}
		for f := range d.Fields {
			local = append(local, Request{User: lu, Field: f}.Key())
			remote = append(remote, Request{User: ru, Field: f}.Key())
		}
	}
	v := value(cfg.ValueSize)
	c := &mcConn{addr: a.client}
	var buf []byte
	for _, k := range append(append([]string(nil), local...), remote...) {
		buf = appendSet(buf[:0], k, v)
		if _, err := c.do(buf); err != nil {
			c.close()
			return nil, fmt.Errorf("forward cost: set %s: %w", k, err)
		}
	}
	c.close()
	pid := a.strata.Pid()
	c0, err := proc.CPUTimeFine(pid)
	if err != nil {
		return nil, err
	}
	idleFor := time.Second
	if err := pause(ctx, idleFor); err != nil {
		return nil, err
	}
	c1, err := proc.CPUTimeFine(pid)
	if err != nil {
		return nil, err
	}
	idle := float64(c1-c0) / float64(idleFor)
	n := cfg.CostRequests
	burst := func(keys []string, count func(sample) float64) (float64, error) {
		s0, err := scrape(ctx, a.admin)
		if err != nil {
			return 0, err
		}
		cpu0, err := proc.CPUTimeFine(pid)
		if err != nil {
			return 0, err
		}
		start := time.Now()
		if err := getMany(a.client, keys, n); err != nil {
			return 0, err
		}
		wall := time.Since(start)
		cpu1, err := proc.CPUTimeFine(pid)
		if err != nil {
			return 0, err
		}
		s1, err := scrape(ctx, a.admin)
		if err != nil {
			return 0, err
		}
		k := count(s1.sub(s0))
		if k < float64(n)/2 {
			return 0, fmt.Errorf("forward cost: %v of %d gets counted as the kind measured", k, n)
		}
		busy := float64(cpu1-cpu0) - idle*float64(wall)
		return max(busy, 0) / k / float64(time.Microsecond), nil
	}
	// Alternate the two kinds and keep each one's median: a neighbour's
	// burst on the shared machine then spoils one round, not the figure.
	fc := &ForwardCost{Requests: n, Rounds: costRounds}
	var locals, forwards []float64
	for range costRounds {
		l, err := burst(local, func(s sample) float64 { return s.local })
		if err != nil {
			return nil, err
		}
		f, err := burst(remote, func(s sample) float64 { return s.forwarded })
		if err != nil {
			return nil, err
		}
		locals, forwards = append(locals, l), append(forwards, f)
	}
	fc.LocalUs, fc.ForwardedUs = median(locals), median(forwards)
	fc.Ratio = ratio(fc.ForwardedUs, fc.LocalUs)
	return fc, nil
}

const costRounds = 3

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// getMany sends n gets of keys (round robin) over 8 connections, 32 in
// flight on each, and reads every reply.
func getMany(addr string, keys []string, n int) error {
	const conns, depth = 8, 32
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &mcConn{addr: addr}
			defer c.close()
			var buf []byte
			for i := w * depth; i < n; i += conns * depth {
				buf = buf[:0]
				k := min(depth, n-i)
				for j := range k {
					buf = appendGet(buf, keys[(i+j)%len(keys)])
				}
				if err := c.send(buf); err != nil {
					errs <- err
					return
				}
				for range k {
					if _, err := c.reply(); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func pause(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

// EtcdState is what the location service keeps in etcd.
type EtcdState struct {
	MuShards int   `json:"mushards"`
	Bytes    int64 `json:"bytes"` // keys and values under the locality prefix
	// BytesPerMuShard is Bytes ÷ MuShards: rows, journal, pins and the
	// members' acks and counter batches spread over the μ-shards.
	BytesPerMuShard float64 `json:"bytes_per_mushard"`
	// DBBytes is etcd's database file, history and free pages included.
	DBBytes int64 `json:"db_bytes"`
	// MuShardsAt8GiB is how many μ-shards fit in etcd's suggested largest
	// backend (8 GiB) at BytesPerMuShard, before MVCC history and
	// fragmentation take their share.
	MuShardsAt8GiB float64 `json:"mushards_at_8gib"`
}

// storePrefix is where strata's location service keeps its state in etcd
// by default: the etcd store's namespace ("strata/") and the table's
// prefix; its rows are under rowsDir there.
const (
	storePrefix = "strata/" + loctable.DefaultPrefix
	rowsDir     = "rows/"
)

func etcdState(ctx context.Context, endpoint string) (*EtcdState, error) {
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := c.Get(ctx, storePrefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("etcd state: %w", err)
	}
	st := &EtcdState{}
	for _, kv := range resp.Kvs {
		st.Bytes += int64(len(kv.Key) + len(kv.Value))
		if strings.HasPrefix(string(kv.Key), storePrefix+rowsDir) {
			st.MuShards++
		}
	}
	if st.MuShards > 0 {
		st.BytesPerMuShard = float64(st.Bytes) / float64(st.MuShards)
		st.MuShardsAt8GiB = float64(8<<30) / st.BytesPerMuShard
	}
	status, err := c.Status(ctx, endpoint)
	if err != nil {
		return nil, fmt.Errorf("etcd status: %w", err)
	}
	st.DBBytes = status.DbSize
	return st, nil
}
