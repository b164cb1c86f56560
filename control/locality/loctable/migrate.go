package loctable

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/strata-cache/strata/control/store"
)

// ErrEpoch: the row is not at the epoch (or state) the caller decided on;
// someone moved the μ-shard since. Re-read and decide again.
var ErrEpoch = errors.New("loctable: the μ-shard's epoch moved")

// Migrate starts a move of the μ-shard to region to: if its row is at
// epoch and Stable, it becomes owned by to at epoch+1 in Prepare, with the
// old owner as Source (still serving) and the move in its history, and a
// journal entry for epoch+1 is written in the same transaction. The write
// is fenced on l, the placement service's leadership, and compares the
// row's revision, so two deciders never both move one epoch. It returns
// the new entry and the store revision of the write (the revision every
// strata must have applied before Promote); an error wrapping ErrEpoch
// when the row has moved on, store.ErrFenced when l no longer leads.
// extra operations (the placement service's record of a manual request)
// are written in the same transaction.
func (t *Table) Migrate(ctx context.Context, l store.Leadership, name string, epoch uint64, to, reason string, now time.Time, extra ...store.Op) (Entry, int64, error) {
	if to == "" || len(to) > maxName || len(reason) > maxName {
		return Entry{}, 0, fmt.Errorf("loctable: migrate %s: region %q or reason %q: must be 1 to %d bytes", name, to, reason, maxName)
	}
	return t.update(ctx, l, name, t.migrateStep(name, epoch, to, reason, now, extra))
}

// migrateStep is Migrate's decision on the row read.
func (t *Table) migrateStep(name string, epoch uint64, to, reason string, now time.Time, extra []store.Op) func(Entry) (Entry, []store.Op, error) {
	return func(e Entry) (Entry, []store.Op, error) {
		if e.Epoch != epoch || e.State != Stable {
			return Entry{}, nil, fmt.Errorf("%w: %s is at epoch %d %v, not %d stable", ErrEpoch, name, e.Epoch, e.State, epoch)
		}
		if e.Owner == to {
			return Entry{}, nil, fmt.Errorf("loctable: migrate %s: already owned by %s", name, to)
		}
		next := Entry{Owner: to, Epoch: epoch + 1, State: Prepare, Source: e.Owner}
		next.History = append(append(next.History, e.History...),
			Move{Epoch: epoch + 1, At: now.UTC(), From: e.Owner, To: to, Reason: reason})
		return next, append([]store.Op{store.Put(t.JournalKey(name), encodeJournal(epoch+1))}, extra...), nil
	}
}

// Promote is PromoteAt with the time of the machine's clock.
func (t *Table) Promote(ctx context.Context, l store.Leadership, name string, epoch uint64) (Entry, int64, error) {
	return t.PromoteAt(ctx, l, name, epoch, time.Now())
}

// PromoteAt makes the destination of epoch's move the serving region: the
// row goes from Prepare to Migrating at the same epoch, and the move's
// time in the history becomes now, when the source stopped serving (a
// value the source holds was written before about then: the placement
// service keeps the μ-shard from returning there until such values
// expired). Call it only once every live strata applied the Prepare row
// (the placement service waits for their acks). Fenced and compared like
// Migrate; promoting a row already Migrating at epoch is a no-op, so a
// successor can repeat it.
func (t *Table) PromoteAt(ctx context.Context, l store.Leadership, name string, epoch uint64, now time.Time) (Entry, int64, error) {
	return t.update(ctx, l, name, promoteStep(name, epoch, now))
}

// promoteStep is PromoteAt's decision on the row read.
func promoteStep(name string, epoch uint64, now time.Time) func(Entry) (Entry, []store.Op, error) {
	return func(e Entry) (Entry, []store.Op, error) {
		if e.Epoch != epoch || e.State == Stable {
			return Entry{}, nil, fmt.Errorf("%w: %s is at epoch %d %v, not %d moving", ErrEpoch, name, e.Epoch, e.State, epoch)
		}
		if e.State == Migrating {
			return e, nil, nil
		}
		e.State = Migrating
		e.History = append([]Move(nil), e.History...)
		if n := len(e.History); n > 0 && e.History[n-1].Epoch == epoch {
			e.History[n-1].At = now.UTC()
		}
		return e, nil, nil
	}
}

// Settle ends the grace window of the move that made epoch: the row goes
// from Migrating to Stable and forgets its Source, and the journal entry
// goes in the same transaction. Fenced and compared like Migrate; settling
// a row already Stable at epoch is a no-op, so a successor that finds the
// journal half done can repeat it. A row still in Prepare is refused: the
// destination has not served yet, and strata that still route to the
// source would miss the deletes that keep the source fresh.
func (t *Table) Settle(ctx context.Context, l store.Leadership, name string, epoch uint64) (Entry, int64, error) {
	return t.update(ctx, l, name, t.settleStep(name, epoch))
}

// settleStep is Settle's decision on the row read.
func (t *Table) settleStep(name string, epoch uint64) func(Entry) (Entry, []store.Op, error) {
	return func(e Entry) (Entry, []store.Op, error) {
		if e.Epoch != epoch || e.State == Prepare {
			return Entry{}, nil, fmt.Errorf("%w: %s is at epoch %d %v, not %d migrating", ErrEpoch, name, e.Epoch, e.State, epoch)
		}
		e.State, e.Source = Stable, ""
		return e, []store.Op{store.Delete(t.JournalKey(name))}, nil
	}
}

// update is a fenced read-modify-write of one row; f decides on the row
// read, and may add operations (on the journal) to the same transaction.
// A lost compare-and-swap reads again and lets f decide again. When f
// leaves the row as it is, nothing is written and the revision returned
// is the row's last write.
func (t *Table) update(ctx context.Context, l store.Leadership, name string, f func(Entry) (Entry, []store.Op, error)) (Entry, int64, error) {
	key := t.Key(name)
	for {
		row, _, err := t.s.Get(ctx, key)
		if err != nil {
			return Entry{}, 0, err
		}
		if !row.Exists() {
			return Entry{}, 0, fmt.Errorf("loctable: %s: no row", name)
		}
		cur, err := Decode(row.Value)
		if err != nil {
			return Entry{}, 0, fmt.Errorf("%s: %w", key, err)
		}
		next, extra, err := f(cur)
		if err != nil {
			return Entry{}, 0, err
		}
		if equal(next, cur) {
			return cur, row.ModRevision, nil
		}
		res, err := store.FencedTxn(ctx, t.s, l, []store.Cond{store.IfModRevision(key, row.ModRevision)},
			append([]store.Op{store.Put(key, Encode(next))}, extra...))
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			return Entry{}, 0, fmt.Errorf("loctable: %s: %w", name, err)
		}
		return next, res.Revision, nil
	}
}

// equal compares entries, a nil and an empty history alike.
func equal(a, b Entry) bool {
	if a.Owner != b.Owner || a.Epoch != b.Epoch || a.State != b.State || a.Source != b.Source || len(a.History) != len(b.History) {
		return false
	}
	for i := range a.History {
		x, y := a.History[i], b.History[i]
		if x.Epoch != y.Epoch || !x.At.Equal(y.At) || x.From != y.From || x.To != y.To || x.Reason != y.Reason {
			return false
		}
	}
	return true
}
