package locality

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/strata-cache/strata/tiers/locality/keyrule"
)

// Run measures each placement in turn: start its topology, prefill the
// users' data where the placement puts it, run the simulated day, read the
// counters, stop everything. Only one placement's processes run at a time.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	rules, err := keyrule.New(keyrule.Config{Rules: []keyrule.Rule{{Prefix: "u:", Tag: true}}})
	if err != nil {
		return nil, err
	}
	rep := newReport(&cfg)
	for _, p := range cfg.Placements {
		fmt.Fprintf(cfg.Log, "locality bench: %s: starting 3 regions\n", p)
		res, err := runPlacement(ctx, &cfg, rules, p)
		if err != nil {
			return rep, fmt.Errorf("%s: %w", p, err)
		}
		rep.add(p, res)
	}
	rep.judge()
	return rep, nil
}

// muName is the μ-shard name of user (keyrule's "prefix field").
func muName(rules *keyrule.Rules, user int) string {
	return rules.Name(rules.Match([]byte(Request{User: user}.Key())))
}

// staticRegion is where static placement pins user's μ-shard: a hash of
// its name.
func staticRegion(name string, regions int) int {
	return int(xxhash.Sum64String(name) % uint64(regions))
}

func runPlacement(ctx context.Context, cfg *Config, rules *keyrule.Rules, placement string) (*Result, error) {
	dir, err := os.MkdirTemp("", "strata-bench-locality-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var t *topology
	for attempt := 1; ; attempt++ {
		t, err = setUp(ctx, cfg, placement, dir)
		if err == nil {
			break
		}
		// Other programs on this machine bind loopback ports too; one may
		// take a port between its reservation and strata's bind.
		if attempt == 3 || !strings.Contains(err.Error(), "address already in use") {
			return nil, err
		}
		fmt.Fprintf(cfg.Log, "locality bench: %s: a port was taken meanwhile, starting again\n", placement)
	}
	defer t.stop()
	res, err := measure(ctx, cfg, rules, t)
	if err != nil {
		return nil, t.explain(err)
	}
	return res, nil
}

// prefill writes every user's fields where the placement keeps them
// first: at home (strata: the first write from home creates the μ-shard
// there), at the hash of the μ-shard's name (static, then pinned there),
// in every region (full replication).
func prefill(ctx context.Context, cfg *Config, rules *keyrule.Rules, t *topology) error {
	d := cfg.day()
	users := d.Regions * d.Users
	byRegion := make([][]int, d.Regions)
	for u := range users {
		switch t.placement {
		case Full:
			for r := range byRegion {
				byRegion[r] = append(byRegion[r], u)
			}
		case Static:
			r := staticRegion(muName(rules, u), d.Regions)
			byRegion[r] = append(byRegion[r], u)
		default:
			r := d.Home(u)
			byRegion[r] = append(byRegion[r], u)
		}
	}
	v := value(cfg.ValueSize)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex // guards first
		first error
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = err
			cancel()
		}
	}
	const conns = 4
	for r, us := range byRegion {
		for k := range conns {
			addr := t.regions[r].client
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := &mcConn{addr: addr}
				defer c.close()
				var buf []byte
				for i := k; i < len(us); i += conns {
					for f := range cfg.Fields {
						if ctx.Err() != nil {
							return
						}
						key := Request{User: us[i], Field: f}.Key()
						buf = appendSet(buf[:0], key, v)
						if err := doWhileStarting(ctx, c, buf); err != nil {
							fail(fmt.Errorf("prefill %s in region %s: %w", key, t.regions[r].name, err))
							return
						}
					}
				}
			}()
		}
	}
	wg.Wait()
	if first != nil {
		return first
	}
	if t.placement != Static {
		return nil
	}
	// Static placement is an operator's: pin every μ-shard where its hash
	// put it, so the placement service never moves it.
	admin := t.regions[0].admin
	for u := range users {
		name := muName(rules, u)
		if err := pin(ctx, admin, name, t.regions[staticRegion(name, d.Regions)].name); err != nil {
			return err
		}
	}
	for u := range min(users, 3) {
		name := muName(rules, u)
		got, err := owner(ctx, admin, name)
		if err != nil {
			return err
		}
		if want := t.regions[staticRegion(name, d.Regions)].name; got != want {
			return fmt.Errorf("static placement: μ-shard %q is owned by %q, not by %q where it was created and pinned", name, got, want)
		}
	}
	return nil
}

// doWhileStarting sends req until no server error refuses it, for up to
// readyWithin: a location service still starting answers "not ready"
// until it has read the store, and on a loaded machine the placement
// service creating thousands of rows at once, or a process stall, makes a
// first write fail. A set sent again is harmless, and the prefill is not
// measured. The poll paces a process start-up.
func doWhileStarting(ctx context.Context, c *mcConn, req []byte) error {
	deadline := time.Now().Add(readyWithin)
	for {
		_, err := c.do(req)
		if err == nil || !errors.Is(err, errServer) || time.Now().After(deadline) {
			return err
		}
		if err := pause(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
}

// measure prefills, then runs the day with every region's clients and
// reads the counters at the boundaries of the steady windows.
func measure(ctx context.Context, cfg *Config, rules *keyrule.Rules, t *topology) (*Result, error) {
	fmt.Fprintf(cfg.Log, "locality bench: %s: prefill\n", t.placement)
	if err := prefill(ctx, cfg, rules, t); err != nil {
		return nil, err
	}
	d := cfg.day()
	locality := t.placement != Full
	var clientBytes atomic.Int64
	var workers []*worker
	for r := range d.Regions {
		for k := range cfg.Conns {
			w := &worker{
				region: r, day: d, cfg: cfg, value: value(cfg.ValueSize), tally: newTally(),
				rng:   rand.New(rand.NewPCG(cfg.Seed, uint64(r*1_000_003+k+1))),
				local: &mcConn{addr: t.regions[r].client, bytes: &clientBytes},
			}
			if !locality {
				for j := range d.Regions {
					if j != r {
						w.remote = append(w.remote, &mcConn{addr: t.toRegion[r][j].Addr()})
					}
				}
			}
			workers = append(workers, w)
		}
	}
	// Steady windows: from Settle after each boundary of the day to the
	// next boundary, one per phase (empty if Settle outlasts the phase).
	type window struct{ from, to time.Duration }
	var windows [maxWindows]window
	for i, ph := range d.Phases() {
		windows[i] = window{time.Duration(ph[0]*float64(cfg.Duration)) + cfg.Settle, time.Duration(ph[1] * float64(cfg.Duration))}
	}
	steady := func(el time.Duration) int {
		for i, w := range windows {
			if el >= w.from && el < w.to {
				return i
			}
		}
		return -1
	}
	wanBefore := t.wan.Bytes()
	var before sample
	var err error
	if locality {
		if before, err = scrapeAll(ctx, t); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(cfg.Log, "locality bench: %s: running the day (%v)\n", t.placement, cfg.Duration)
	start := time.Now()
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(ctx, start, steady)
		}()
	}
	// The scraper reads the counters at each window's edges, while the
	// workers run; its samples are differenced per window.
	var winLoc [maxWindows]sample
	var scrapeErr error
	if locality {
		for i, win := range windows {
			if win.from >= win.to {
				continue
			}
			a, err := scrapeAt(ctx, t, start.Add(win.from))
			if err != nil {
				scrapeErr = err
				break
			}
			b, err := scrapeAt(ctx, t, start.Add(win.to))
			if err != nil {
				scrapeErr = err
				break
			}
			winLoc[i] = b.sub(a)
		}
	}
	wg.Wait()
	if scrapeErr != nil {
		return nil, scrapeErr
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	res := &Result{Placement: t.placement}
	tl := newTally()
	for _, w := range workers {
		tl.merge(w.tally)
	}
	var after sample
	if locality {
		if after, err = scrapeAll(ctx, t); err != nil {
			return nil, err
		}
	}
	var mem int64
	for _, r := range t.regions {
		b, err := l2Bytes(r.memcached)
		if err != nil {
			return nil, err
		}
		mem += b
	}
	day := after.sub(before)
	if locality && day.local+day.forwarded+day.unreachable == 0 {
		return nil, errors.New("strata counted no locality-routed request (strata_locality_requests_total): is locality routing wired into this binary?")
	}
	res.fill(tl, day, winLoc, t.wan.Bytes()-wanBefore, clientBytes.Load(), mem/int64(len(t.regions)), locality)
	if tl.requests > 0 && float64(tl.errors) > 0.01*float64(tl.requests) {
		return nil, fmt.Errorf("%d of %d requests failed; the first: %w", tl.errors, tl.requests, tl.firstErr)
	}
	if t.placement == Strata {
		if res.Etcd, err = etcdState(ctx, t.etcdAddr); err != nil {
			return nil, err
		}
		fmt.Fprintf(cfg.Log, "locality bench: %s: forwarded versus local CPU cost\n", t.placement)
		if res.ForwardCost, err = forwardCost(ctx, cfg, rules, t); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// scrapeAt waits until at, then reads every region's counters.
func scrapeAt(ctx context.Context, t *topology, at time.Time) (sample, error) {
	if d := time.Until(at); d > 0 {
		tm := time.NewTimer(d)
		select {
		case <-ctx.Done():
			tm.Stop()
			return sample{}, ctx.Err()
		case <-tm.C:
		}
	}
	return scrapeAll(ctx, t)
}

// sortedKeys is the map's keys in order (for stable output).
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
