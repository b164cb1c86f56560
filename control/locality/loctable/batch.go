package loctable

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/strata-cache/strata/control/store"
)

// BatchRows bounds the rows of one batched transaction: each brings a
// compare and up to three operations (the row, the journal, an outcome),
// well under etcd's default limit of 128 operations per transaction.
const BatchRows = 40

// Step is one row's change in a batch (MigrateAll, PromoteAll, SettleAll).
type Step struct {
	Name  string
	Epoch uint64
	// To and Reason: a Migrate's destination and reason; Extra its
	// additional operations. Unused by Promote and Settle.
	To, Reason string
	Extra      []store.Op
}

// Result is what one Step came to: the entry and the revision as the
// single-row method returns them, or its error (ErrEpoch when the row
// moved on). A store error fails the whole call instead.
type Result struct {
	Entry Entry
	Rev   int64
	Err   error
}

// MigrateAll is Migrate for many μ-shards at the time now, in as few
// fenced transactions as BatchRows allows: every live strata then
// applies and acknowledges one revision for all of them. Each row keeps
// its own compare; a batch whose compare lost (a row changed between
// read and write) is carried out row by row.
func (t *Table) MigrateAll(ctx context.Context, l store.Leadership, steps []Step, now time.Time) ([]Result, error) {
	return t.updateAll(ctx, l, steps, func(s Step) (func(Entry) (Entry, []store.Op, error), error) {
		if s.To == "" || len(s.To) > maxName || len(s.Reason) > maxName {
			return nil, fmt.Errorf("loctable: migrate %s: region %q or reason %q: must be 1 to %d bytes", s.Name, s.To, s.Reason, maxName)
		}
		return t.migrateStep(s.Name, s.Epoch, s.To, s.Reason, now, s.Extra), nil
	})
}

// PromoteAll is PromoteAt for many μ-shards, batched as MigrateAll.
func (t *Table) PromoteAll(ctx context.Context, l store.Leadership, steps []Step, now time.Time) ([]Result, error) {
	return t.updateAll(ctx, l, steps, func(s Step) (func(Entry) (Entry, []store.Op, error), error) {
		return promoteStep(s.Name, s.Epoch, now), nil
	})
}

// SettleAll is Settle for many μ-shards, batched as MigrateAll.
func (t *Table) SettleAll(ctx context.Context, l store.Leadership, steps []Step) ([]Result, error) {
	return t.updateAll(ctx, l, steps, func(s Step) (func(Entry) (Entry, []store.Op, error), error) {
		return t.settleStep(s.Name, s.Epoch), nil
	})
}

// updateAll reads each step's row, lets its function decide, and writes
// the changes BatchRows at a time, each row compared on the revision
// read. A step whose function refuses gets its error; a row the
// function leaves as it is is not written (its last revision is
// returned). A batch that loses a compare is redone row by row (update).
func (t *Table) updateAll(ctx context.Context, l store.Leadership, steps []Step, fn func(Step) (func(Entry) (Entry, []store.Op, error), error)) ([]Result, error) {
	out := make([]Result, len(steps))
	for lo := 0; lo < len(steps); lo += BatchRows {
		hi := min(lo+BatchRows, len(steps))
		var conds []store.Cond
		var ops []store.Op
		var written []int
		fs := make([]func(Entry) (Entry, []store.Op, error), hi-lo)
		for i := lo; i < hi; i++ {
			f, err := fn(steps[i])
			if err != nil {
				out[i].Err = err
				continue
			}
			fs[i-lo] = f
			key := t.Key(steps[i].Name)
			row, _, err := t.s.Get(ctx, key)
			switch {
			case err != nil:
				return out, err
			case !row.Exists():
				out[i].Err = fmt.Errorf("loctable: %s: no row", steps[i].Name)
				continue
			}
			cur, err := Decode(row.Value)
			if err != nil {
				return out, fmt.Errorf("%s: %w", key, err)
			}
			next, extra, err := f(cur)
			switch {
			case err != nil:
				out[i].Err = err
			case equal(next, cur):
				out[i] = Result{Entry: cur, Rev: row.ModRevision}
			default:
				out[i].Entry = next
				conds = append(conds, store.IfModRevision(key, row.ModRevision))
				ops = append(append(ops, store.Put(key, Encode(next))), extra...)
				written = append(written, i)
			}
		}
		if len(written) == 0 {
			continue
		}
		res, err := store.FencedTxn(ctx, t.s, l, conds, ops)
		if errors.Is(err, store.ErrConflict) {
			for _, i := range written {
				out[i] = Result{}
				out[i].Entry, out[i].Rev, out[i].Err = t.update(ctx, l, steps[i].Name, fs[i-lo])
				if errors.Is(out[i].Err, store.ErrFenced) {
					return out, out[i].Err
				}
			}
			continue
		}
		if err != nil {
			return out, fmt.Errorf("loctable: a batch of %d rows: %w", len(written), err)
		}
		for _, i := range written {
			out[i].Rev = res.Revision
		}
	}
	return out, nil
}
