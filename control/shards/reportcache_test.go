package shards

import (
	"context"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/store"
)

// The cache decodes a report once per write of its row, leaves out rows
// that do not parse, and forgets rows that are gone.
func TestReportCacheDecodesOnlyRewrittenRows(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory(store.MemoryOptions{}).Connect()
	defer st.Close()
	put := func(r Report) {
		t.Helper()
		if err := PutReport(ctx, st, "l2", r, 0); err != nil {
			t.Fatal(err)
		}
	}
	put(Report{ID: "a", Applied: 1, Requests: []float64{1, 2}})
	if _, err := st.Txn(ctx, nil, []store.Op{store.Put(agentsPrefix("l2")+"b", []byte("not json"))}); err != nil {
		t.Fatal(err)
	}
	c := reportCache{}
	first, err := decodeListed(ctx, c, st)
	if err != nil || len(first) != 1 || first[0].ID != "a" || first[0].Applied != 1 {
		t.Fatalf("first read: %+v, %v", first, err)
	}
	again, err := decodeListed(ctx, c, st)
	if err != nil || len(again) != 1 || &again[0].Requests[0] != &first[0].Requests[0] {
		t.Fatalf("an unchanged row was decoded again: %+v, %v", again, err)
	}
	put(Report{ID: "a", Applied: 2, Requests: []float64{3, 4}})
	put(Report{ID: "b", Applied: 2})
	got, err := decodeListed(ctx, c, st)
	if err != nil || len(got) != 2 || got[0].Applied != 2 || got[0].Requests[0] != 3 || got[1].ID != "b" {
		t.Fatalf("after rewrites: %+v, %v", got, err)
	}
	if _, err := st.Txn(ctx, nil, []store.Op{store.Delete(agentsPrefix("l2") + "a")}); err != nil {
		t.Fatal(err)
	}
	if got, err = decodeListed(ctx, c, st); err != nil || len(got) != 1 || got[0].ID != "b" || len(c) != 1 {
		t.Fatalf("after a delete: %+v (cache %d rows), %v", got, len(c), err)
	}
}

// The leader decodes the published map once per write of its row: rounds
// with nothing to do reuse it, and a rewrite is decoded again.
func TestLeaderDecodesTheMapOncePerWrite(t *testing.T) {
	r := newRig(t)
	l, _ := r.leader()
	r.mustRound(l, 0) // publishes version 1
	r.mustRound(l, time.Second)
	first := l.mapRead
	if first == nil {
		t.Fatal("the round did not keep the decoded map")
	}
	r.mustRound(l, 2*time.Second)
	if l.mapRead != first {
		t.Fatal("an unchanged map was decoded again")
	}
	row, _, err := r.st.Get(r.ctx, mapKey("l2"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.st.Txn(r.ctx, nil, []store.Op{store.Put(mapKey("l2"), row.Value)}); err != nil {
		t.Fatal(err)
	}
	r.mustRound(l, 3*time.Second)
	if l.mapRead == first || l.mapRead == nil {
		t.Fatal("a rewritten map row was not decoded again")
	}
}

// decodeListed lists the agents' rows of tier l2, as a round does, and
// decodes them through c.
func decodeListed(ctx context.Context, c reportCache, st store.Reader) ([]Report, error) {
	rows, _, err := st.List(ctx, agentsPrefix("l2"))
	if err != nil {
		return nil, err
	}
	return c.decode(rows), nil
}
