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
// epoch and Stable, it becomes owned by to at epoch+1, Migrating, with the
// old owner as Source and the move in its history. The write is fenced on
// l, the placement service's leadership, and compares the row's revision,
// so two deciders never both move one epoch. It returns the new entry; an
// error wrapping ErrEpoch when the row has moved on, store.ErrFenced when
// l no longer leads.
func (t *Table) Migrate(ctx context.Context, l store.Leadership, name string, epoch uint64, to, reason string, now time.Time) (Entry, error) {
	if to == "" || len(to) > maxName || len(reason) > maxName {
		return Entry{}, fmt.Errorf("loctable: migrate %s: region %q or reason %q: must be 1 to %d bytes", name, to, reason, maxName)
	}
	return t.update(ctx, l, name, func(e Entry) (Entry, error) {
		if e.Epoch != epoch || e.State != Stable {
			return Entry{}, fmt.Errorf("%w: %s is at epoch %d %v, not %d stable", ErrEpoch, name, e.Epoch, e.State, epoch)
		}
		if e.Owner == to {
			return Entry{}, fmt.Errorf("loctable: migrate %s: already owned by %s", name, to)
		}
		next := Entry{Owner: to, Epoch: epoch + 1, State: Migrating, Source: e.Owner}
		next.History = append(append(next.History, e.History...),
			Move{Epoch: epoch + 1, At: now.UTC(), From: e.Owner, To: to, Reason: reason})
		return next, nil
	})
}

// Settle ends the grace window of the move that made epoch: the row
// becomes Stable and forgets its Source. Fenced and compared like
// Migrate; settling a row already Stable at epoch is a no-op, so a
// successor that finds the journal half done can repeat it.
func (t *Table) Settle(ctx context.Context, l store.Leadership, name string, epoch uint64) (Entry, error) {
	return t.update(ctx, l, name, func(e Entry) (Entry, error) {
		if e.Epoch != epoch {
			return Entry{}, fmt.Errorf("%w: %s is at epoch %d, not %d", ErrEpoch, name, e.Epoch, epoch)
		}
		e.State, e.Source = Stable, ""
		return e, nil
	})
}

// update is a fenced read-modify-write of one row; f decides on the row
// read. A lost compare-and-swap reads again and lets f decide again.
func (t *Table) update(ctx context.Context, l store.Leadership, name string, f func(Entry) (Entry, error)) (Entry, error) {
	key := t.Key(name)
	for {
		row, _, err := t.s.Get(ctx, key)
		if err != nil {
			return Entry{}, err
		}
		if !row.Exists() {
			return Entry{}, fmt.Errorf("loctable: %s: no row", name)
		}
		cur, err := Decode(row.Value)
		if err != nil {
			return Entry{}, fmt.Errorf("%s: %w", key, err)
		}
		next, err := f(cur)
		if err != nil {
			return Entry{}, err
		}
		if equal(next, cur) {
			return cur, nil
		}
		_, err = store.FencedTxn(ctx, t.s, l, []store.Cond{store.IfModRevision(key, row.ModRevision)},
			[]store.Op{store.Put(key, Encode(next))})
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			return Entry{}, fmt.Errorf("loctable: %s: %w", name, err)
		}
		return next, nil
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
