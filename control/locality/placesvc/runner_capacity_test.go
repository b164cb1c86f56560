package placesvc_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/locality/internal/harness"
	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/internal/poll"
)

// TestRunnerFollowsCapacity: the leading runner hands its leader the
// capacity rows as members write them; a row that does not decode is left
// out, and a deleted one (its member's lease ended) is forgotten.
func TestRunnerFollowsCapacity(t *testing.T) { each(t, testRunnerFollowsCapacity) }

func testRunnerFollowsCapacity(t *testing.T, env harness.Env) {
	ctx := ctxT(t)
	r, rc, _ := runner(t, env, "p1", 50*time.Millisecond)
	poll.Until(t, harness.Wait, "p1 leads", func() bool { return r.Leading() != nil })
	now := time.Now
	if env.Clock != nil {
		now = env.Clock.Now
	}
	lay := locsvc.NewLayout("")
	put := func(member string, v []byte) {
		t.Helper()
		if _, err := store.PutRow(ctx, rc, lay.CapacityKey(member), v); err != nil {
			t.Fatal(err)
		}
	}
	// What the leader knows of b, as "known used/limit over".
	bState := func() string {
		ld := r.Leading()
		if ld == nil {
			return "not leading"
		}
		b := ld.Capacities(now())[1]
		return fmt.Sprintf("%v %d/%d %v", b.Known, b.Used, b.Limit, b.OverCapacity)
	}
	put("mb1", locsvc.EncodeCapacity(locsvc.Capacity{Region: "b", Used: 95, Limit: 100, At: now()}))
	put("ma1", locsvc.EncodeCapacity(locsvc.Capacity{Region: "a", Used: 5, Limit: 100, At: now()}))
	poll.Until(t, harness.Wait, "b full", func() bool { return bState() == "true 95/100 true" })
	put("mb2", []byte("not a report"))
	put("mb1", locsvc.EncodeCapacity(locsvc.Capacity{Region: "b", Used: 50, Limit: 100, At: now()}))
	poll.Until(t, harness.Wait, "b with room, the garbage row left out", func() bool { return bState() == "true 50/100 false" })
	if _, err := rc.Txn(ctx, nil, []store.Op{store.Delete(lay.CapacityKey("mb1"))}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, harness.Wait, "b forgotten", func() bool { return bState() == "false 0/0 false" })
}
