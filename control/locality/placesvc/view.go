package placesvc

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/locality/loctable"
	"github.com/strata-cache/strata/control/store"
)

// View answers the admin API's locality calls from the store, in any
// strata, leader or not; requests (migrate, pin) are rows the placement
// service follows. It starts no goroutine.
type View struct {
	st      store.ReadWriter
	table   *loctable.Table
	layout  locsvc.Layout
	regions []string
	runner  *Runner // nil, or this process's candidate (for its counters)
	now     func() time.Time
	// ceiling and maxAge judge the capacity reports (Config's
	// CapacityCeiling and CapacityMaxAge).
	ceiling float64
	maxAge  time.Duration
}

var _ admin.LocalityControl = (*View)(nil)

// NewView returns a view of the locality state under prefix in st.
// regions are the configured regions (a request naming another is
// refused); r, if not nil, is this process's placement candidate: while
// it leads, the view shows its decayed counters.
func NewView(st store.ReadWriter, prefix string, regions []string, r *Runner, now func() time.Time) *View {
	if now == nil {
		now = time.Now
	}
	return &View{st: st, table: loctable.New(st, prefix), layout: locsvc.NewLayout(prefix),
		regions: append([]string(nil), regions...), runner: r, now: now,
		ceiling: DefaultCapacityCeiling, maxAge: DefaultCapacityMaxAge}
}

// WithCapacity makes the view judge capacity reports as a placement
// service with this CapacityCeiling and CapacityMaxAge does (zero: the
// defaults), and returns v. Call it before the view is used.
func (v *View) WithCapacity(ceiling float64, maxAge time.Duration) *View {
	if ceiling != 0 {
		v.ceiling = ceiling
	}
	if maxAge != 0 {
		v.maxAge = maxAge
	}
	return v
}

func (v *View) knows(region string) bool {
	for _, r := range v.regions {
		if r == region {
			return true
		}
	}
	return false
}

func notFound(id string) error {
	return &admin.FieldError{Field: "id", Err: fmt.Errorf("μ-shard %q: %w", id, admin.ErrNotFound)}
}

// MuShard returns id's row, pin, history and counters.
func (v *View) MuShard(ctx context.Context, id string) (admin.MuShard, error) {
	e, _, ok, err := v.table.Read(ctx, id)
	if err != nil {
		return admin.MuShard{}, err
	}
	if !ok {
		return admin.MuShard{}, notFound(id)
	}
	m := admin.MuShard{ID: id, Owner: e.Owner, Epoch: e.Epoch, State: e.State.String(), Source: e.Source,
		History: make([]admin.MuShardMove, len(e.History))}
	for i, h := range e.History {
		m.History[i] = admin.MuShardMove{Epoch: h.Epoch, At: h.At, From: h.From, To: h.To, Reason: h.Reason}
	}
	pin, _, err := v.st.Get(ctx, v.layout.PinKey(id))
	if err != nil {
		return admin.MuShard{}, err
	}
	m.Pin = string(pin.Value)
	if m.LastRequest, err = v.outcome(ctx, id); err != nil {
		return admin.MuShard{}, err
	}
	if m.Counters, err = v.counters(ctx, id); err != nil {
		return admin.MuShard{}, err
	}
	return m, nil
}

// outcome is what the placement leader did with id's last manual
// request; nil when there is none (or its row does not decode: it is
// then as good as absent, and the next request replaces it).
func (v *View) outcome(ctx context.Context, id string) (*admin.MoveOutcome, error) {
	row, _, err := v.st.Get(ctx, v.layout.OutcomeKey(id))
	if err != nil || !row.Exists() {
		return nil, err
	}
	o, err := locsvc.DecodeOutcome(row.Value)
	if err != nil {
		return nil, nil
	}
	return moveOutcome(o), nil
}

func moveOutcome(o locsvc.Outcome) *admin.MoveOutcome {
	return &admin.MoveOutcome{To: o.To, Outcome: o.Result.String(), Reason: o.Reason, At: o.At, Until: timePtr(o.Until), Epoch: o.Epoch}
}

// timePtr is &t, nil for the zero time (omitted from the JSON).
func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// counters are the leader's decayed counts if this process leads, else
// the sum of the members' last batches.
func (v *View) counters(ctx context.Context, id string) (map[string]float64, error) {
	if v.runner != nil {
		if ld := v.runner.Leading(); ld != nil {
			out := ld.Counters(id, v.now())
			for r, n := range out {
				out[r] = math.Round(n*100) / 100
			}
			return out, nil
		}
	}
	rows, _, err := v.st.List(ctx, v.layout.CountersPrefix())
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, row := range rows {
		b, err := locsvc.DecodeBatch(row.Value)
		if err != nil {
			continue
		}
		for _, c := range b.Counts {
			if c.Name == id {
				out[b.Region] += float64(c.N)
			}
		}
	}
	return out, nil
}

// Migrate records a request to move id to region to; the placement
// leader carries it out (or refuses it against a pin) on its next round,
// and records what it did (MuShard's LastRequest). The outcome of an
// earlier request goes in the same transaction, so what MuShard shows is
// never a stale answer to this one. (A leader still deciding on the
// earlier request may write its outcome after; it names that request's
// region and time, and this request's outcome replaces it.)
func (v *View) Migrate(ctx context.Context, id, to string) (admin.MuShard, error) {
	if !v.knows(to) {
		return admin.MuShard{}, &admin.FieldError{Field: "to", Err: fmt.Errorf("unknown region %q", to)}
	}
	m, err := v.MuShard(ctx, id)
	if err != nil {
		return m, err
	}
	ops := []store.Op{store.Delete(v.layout.OutcomeKey(id)), store.Put(v.layout.MigrateKey(id), []byte(to))}
	if _, err := v.st.Txn(ctx, nil, ops); err != nil {
		return admin.MuShard{}, err
	}
	m.Requested, m.LastRequest = to, nil
	return m, nil
}

// Pin pins id to region, or unpins it ("").
func (v *View) Pin(ctx context.Context, id, region string) (admin.MuShard, error) {
	if region != "" && !v.knows(region) {
		return admin.MuShard{}, &admin.FieldError{Field: "region", Err: fmt.Errorf("unknown region %q", region)}
	}
	if _, ok, err := v.table.Get(ctx, id); err != nil || !ok {
		if err == nil {
			err = notFound(id)
		}
		return admin.MuShard{}, err
	}
	var err error
	if region == "" {
		_, err = store.DeleteRow(ctx, v.st, v.layout.PinKey(id))
	} else {
		_, err = store.PutRow(ctx, v.st, v.layout.PinKey(id), []byte(region))
	}
	if err != nil {
		return admin.MuShard{}, err
	}
	return v.MuShard(ctx, id)
}

// PinRule pins every μ-shard of the rule with prefix to region ("" unpins).
func (v *View) PinRule(ctx context.Context, prefix, region string) error {
	if region != "" && !v.knows(region) {
		return &admin.FieldError{Field: "region", Err: fmt.Errorf("unknown region %q", region)}
	}
	var err error
	if region == "" {
		_, err = store.DeleteRow(ctx, v.st, v.layout.RulePinKey(prefix))
	} else {
		_, err = store.PutRow(ctx, v.st, v.layout.RulePinKey(prefix), []byte(region))
	}
	return err
}

// Migrations lists the moves in flight (the journal) and the manual
// requests refused or waiting (outcomes/), in name order, a μ-shard's
// move before its request. A refusal is listed while the μ-shard is at
// the epoch it was refused at: once it moved, or a new request replaced
// it, it is old news (MuShard still shows the last one).
func (v *View) Migrations(ctx context.Context) ([]admin.Migration, error) {
	pending, err := v.table.Journal(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]admin.Migration, 0, len(pending))
	for _, p := range pending {
		e, ok, err := v.table.Get(ctx, p.Name)
		if err != nil {
			return nil, err
		}
		if !ok || e.State == loctable.Stable {
			continue // settled between the two reads
		}
		mg := admin.Migration{ID: p.Name, From: e.Source, To: e.Owner, Epoch: e.Epoch, State: e.State.String()}
		if n := len(e.History); n > 0 {
			mg.Since = e.History[n-1].At
		}
		out = append(out, mg)
	}
	reqs, err := v.requests(ctx)
	if err != nil {
		return nil, err
	}
	out = append(out, reqs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// requests are the manual requests refused (at the row's epoch now) or
// waiting, with their μ-shard's row as it is now.
func (v *View) requests(ctx context.Context) ([]admin.Migration, error) {
	rows, _, err := v.st.List(ctx, v.layout.OutcomesPrefix())
	if err != nil {
		return nil, err
	}
	var out []admin.Migration
	for _, row := range rows {
		o, err := locsvc.DecodeOutcome(row.Value)
		if err != nil || o.Result == locsvc.Started {
			continue
		}
		id := strings.TrimPrefix(row.Key, v.layout.OutcomesPrefix())
		e, ok, err := v.table.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if !ok || (o.Result == locsvc.Refused && e.Epoch != o.Epoch) {
			continue
		}
		out = append(out, admin.Migration{ID: id, From: e.Owner, To: o.To, Epoch: e.Epoch, State: e.State.String(),
			Since: o.At, Outcome: o.Result.String(), Reason: o.Reason, Until: timePtr(o.Until)})
	}
	return out, nil
}
