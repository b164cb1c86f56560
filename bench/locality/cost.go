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
	"github.com/strata-cache/strata/control/locality/loctable"
	"github.com/strata-cache/strata/tiers/locality/keyrule"
)

// Two figures the issue asks for besides the placements': what a
// forwarded request costs the forwarding strata in CPU against a local L2
// request, and how much the location table takes in etcd per μ-shard.
// Both are read from the strata placement's topology after its day.

// ForwardCost is region a's strata's CPU per request, its own L2 against
// forwarded to b, with a constant background (counters, the control
// loops) measured idle first and taken off; the median of Rounds
// alternating bursts of each kind.
//
// Both kinds are sent alike: the same connections, the same batches, at
// the same pace (RatePerSec), so a burst of either kind lasts as long and
// wakes strata as often. Sent as fast as each kind goes, local gets would
// run some fifty times faster than forwarded ones, which a WAN round trip
// holds back; each wakeup of a loop would then serve hundreds of local
// requests against a few dozen forwarded ones, and the ratio would
// measure batching rather than what forwarding costs (the first version
// of this bench did that and reported 3–4×).
type ForwardCost struct {
	LocalUs     float64 `json:"local_cpu_us_per_request"`
	ForwardedUs float64 `json:"forwarded_cpu_us_per_request"`
	Ratio       float64 `json:"forwarded_over_local"`
	Requests    int     `json:"requests_each"` // per kind and round
	Rounds      int     `json:"rounds"`
	// RatePerSec is the pace both kinds were sent at; LocalRate and
	// ForwardedRate what each achieved (medians), which show whether the
	// forwarded gets kept the pace.
	RatePerSec    float64 `json:"rate_per_sec"`
	LocalRate     float64 `json:"local_achieved_per_sec"`
	ForwardedRate float64 `json:"forwarded_achieved_per_sec"`
}

// The shape of the cost bursts: costConns connections each send a batch
// of costDepth gets every pacing period and read the replies.
const (
	costRounds = 3
	costConns  = 64
	costDepth  = 32
)

// costPeriod is the pacing period: twice the a–b round trip, so a
// forwarded batch is answered before its connection's next one is due.
func costPeriod(cfg *Config) time.Duration { return 4 * cfg.oneWay(0, 1) }

// forwardCost pins a few of a's users to a and of b's to b (so the load
// below moves nothing), writes their keys, then sends the same number of
// gets of each kind to a at the same pace, reading a's CPU time and its
// local and forwarded counts around each burst.
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
	n, period := cfg.CostRequests, costPeriod(cfg)
	// idle is a's CPU per second of wall time with no requests, measured
	// before each round: the control loops' work drifts over a run.
	idle := func() (float64, error) {
		c0, err := proc.CPUTimeFine(pid)
		if err != nil {
			return 0, err
		}
		const idleFor = time.Second
		if err := pause(ctx, idleFor); err != nil {
			return 0, err
		}
		c1, err := proc.CPUTimeFine(pid)
		if err != nil {
			return 0, err
		}
		return float64(c1-c0) / float64(idleFor), nil
	}
	type result struct{ us, rate float64 }
	burst := func(idle float64, keys []string, count func(sample) float64) (result, error) {
		s0, err := scrape(ctx, a.admin)
		if err != nil {
			return result{}, err
		}
		cpu0, err := proc.CPUTimeFine(pid)
		if err != nil {
			return result{}, err
		}
		start := time.Now()
		if err := getPaced(ctx, a.client, keys, n, period); err != nil {
			return result{}, err
		}
		wall := time.Since(start)
		cpu1, err := proc.CPUTimeFine(pid)
		if err != nil {
			return result{}, err
		}
		s1, err := scrape(ctx, a.admin)
		if err != nil {
			return result{}, err
		}
		k := count(s1.sub(s0))
		if k < float64(n)/2 {
			return result{}, fmt.Errorf("forward cost: %v of %d gets counted as the kind measured", k, n)
		}
		busy := float64(cpu1-cpu0) - idle*float64(wall)
		return result{us: max(busy, 0) / k / float64(time.Microsecond), rate: float64(n) / wall.Seconds()}, nil
	}
	// Alternate the two kinds and keep each one's median: a neighbour's
	// burst on the shared machine then spoils one round, not the figure.
	fc := &ForwardCost{Requests: n, Rounds: costRounds, RatePerSec: costConns * costDepth / period.Seconds()}
	var lus, fus, lrs, frs []float64
	for range costRounds {
		bg, err := idle()
		if err != nil {
			return nil, err
		}
		l, err := burst(bg, local, func(s sample) float64 { return s.local })
		if err != nil {
			return nil, err
		}
		f, err := burst(bg, remote, func(s sample) float64 { return s.forwarded })
		if err != nil {
			return nil, err
		}
		lus, fus = append(lus, l.us), append(fus, f.us)
		lrs, frs = append(lrs, l.rate), append(frs, f.rate)
	}
	fc.LocalUs, fc.ForwardedUs = median(lus), median(fus)
	fc.LocalRate, fc.ForwardedRate = median(lrs), median(frs)
	fc.Ratio = ratio(fc.ForwardedUs, fc.LocalUs)
	return fc, nil
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// getPaced sends n gets of keys (round robin) over costConns connections:
// each sends a batch of costDepth every period, their starts spread over
// the period, reads the batch's replies and waits for its next turn. A
// connection whose replies come later than its turn sends at once, so a
// kind that cannot keep the pace shows in its achieved rate.
func getPaced(ctx context.Context, addr string, keys []string, n int, period time.Duration) error {
	per := (n + costConns - 1) / costConns
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, costConns)
	for w := range costConns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &mcConn{addr: addr}
			defer c.close()
			next := start.Add(period * time.Duration(w) / costConns)
			var buf []byte
			for sent := 0; sent < per; {
				if err := pause(ctx, time.Until(next)); err != nil {
					errs <- err
					return
				}
				next = next.Add(period)
				buf = buf[:0]
				k := min(costDepth, per-sent)
				for j := range k {
					buf = appendGet(buf, keys[(w*per+sent+j)%len(keys)])
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
				sent += k
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
		if name, ok := strings.CutPrefix(string(kv.Key), storePrefix+rowsDir); ok && !loctable.IsMarker(name) {
			st.MuShards++ // a marker (a strata's join) is no μ-shard
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
