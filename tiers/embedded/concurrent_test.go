package embedded

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"

	"github.com/strata-cache/strata/tiers"
)

// Many goroutines on a handful of keys: every value read back is one that
// was written whole, and the CAS values one goroutine is given only grow.
func TestConcurrentHammer(t *testing.T) {
	s := newStore(t, Config{MaxBytes: 4 << 20, MaxItemSize: 64 << 10, Shards: 4})
	values := []string{"", "a", "bravo", string(make([]byte, 5000)), "delta-delta-delta"}
	valid := map[string]bool{}
	for _, v := range values {
		valid[v] = true
	}
	const workers, opsEach = 16, 3000
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 99))
			var op tiers.Op
			var lastCAS uint64
			for i := 0; i < opsEach; i++ {
				key := []byte("key" + strconv.Itoa(r.IntN(6)))
				op.Req = tiers.Request{Key: key}
				switch r.IntN(10) {
				case 0, 1, 2:
					op.Req.Kind, op.Req.Value = tiers.KindSet, []byte(values[r.IntN(len(values))])
				case 3:
					op.Req.Kind, op.Req.Invalidate = tiers.KindDelete, r.IntN(2) == 0
				case 4:
					op.Req.Kind, op.Req.HasTTL, op.Req.TTL = tiers.KindGet, true, int64(r.IntN(100))
				case 5:
					op.Req.Kind, op.Req.Mode = tiers.KindSet, tiers.ModeAdd
					op.Req.Value = []byte(values[r.IntN(len(values))])
				case 6:
					if r.IntN(50) == 0 {
						op.Req = tiers.Request{Kind: tiers.KindFlush}
					} else {
						op.Req.Kind, op.Req.Vivify, op.Req.VivifyTTL, op.Req.WantValue = tiers.KindGet, true, 30, true
					}
				default:
					op.Req.Kind, op.Req.WantValue, op.Req.Recache, op.Req.RecacheTTL = tiers.KindGet, true, true, 50
				}
				s.Do(&op)
				res := &op.Res
				if res.Status == tiers.StatusHit && op.Req.WantValue && !valid[string(res.Value)] {
					errs <- fmt.Errorf("read a value never written: %q", res.Value)
					return
				}
				if res.Status == tiers.StatusHit && res.Size != len(res.Value) && op.Req.WantValue {
					errs <- fmt.Errorf("size %d but %d value bytes", res.Size, len(res.Value))
					return
				}
				if op.Req.Kind == tiers.KindSet && res.Status == tiers.StatusStored {
					if res.CAS <= lastCAS {
						errs <- fmt.Errorf("CAS went from %d to %d", lastCAS, res.CAS)
						return
					}
					lastCAS = res.CAS
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if st := s.Stats(); st.Bytes > 4<<20 || int(st.CurrItems) != s.Len() {
		t.Errorf("stats after hammering: %+v", st)
	}
}

// Concurrent increments of one counter lose nothing, and a gets/cas loop
// applies every successful compare-and-swap exactly once.
func TestConcurrentIncrAndCAS(t *testing.T) {
	s := newStore(t, Config{})
	do(s, setReq("n", "0"))
	do(s, setReq("c", "0"))
	const workers, each = 8, 2000
	var wg sync.WaitGroup
	casWins := make([]int, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var op tiers.Op
			for i := 0; i < each; i++ {
				op.Req = tiers.Request{Kind: tiers.KindArith, Mode: tiers.ModeIncr, Key: []byte("n"), Delta: 1}
				s.Do(&op)
				if op.Res.Status != tiers.StatusStored {
					t.Errorf("incr: %v", op.Res.Status)
					return
				}
				op.Req = tiers.Request{Kind: tiers.KindGet, Key: []byte("c"), WantValue: true, WantCAS: true}
				s.Do(&op)
				n, err := strconv.Atoi(string(op.Res.Value))
				if err != nil {
					t.Errorf("counter value %q", op.Res.Value)
					return
				}
				op.Req = tiers.Request{Kind: tiers.KindSet, Key: []byte("c"), Value: []byte(strconv.Itoa(n + 1)),
					HasCompareCAS: true, CompareCAS: op.Res.CAS}
				s.Do(&op)
				switch op.Res.Status {
				case tiers.StatusStored:
					casWins[w]++
				case tiers.StatusExists:
				default:
					t.Errorf("cas: %v", op.Res.Status)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	if res := do(s, getReq("n")); string(res.Value) != strconv.Itoa(workers*each) {
		t.Errorf("counter = %q, want %d", res.Value, workers*each)
	}
	total := 0
	for _, n := range casWins {
		total += n
	}
	if res := do(s, getReq("c")); string(res.Value) != strconv.Itoa(total) {
		t.Errorf("cas counter = %q, but %d cas succeeded", res.Value, total)
	}
	if total == 0 {
		t.Error("no cas ever succeeded")
	}
}
