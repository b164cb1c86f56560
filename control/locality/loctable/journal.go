package loctable

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/strata-cache/strata/control/store"
)

// The journal holds one entry per unfinished migration: Migrate writes it
// with the Prepare row, Settle deletes it with the Stable row, both in the
// row's transaction, so the journal names exactly the rows in Prepare or
// Migrating. A placement service that takes over reads it and rolls every
// entry forward (Promote once the acks are in, then Settle after the grace
// window); it never has to scan the whole table.
//
// An entry's value is 'J' 1 uvarint(epoch): the epoch of the move.

const (
	journalMagic   = 'J'
	journalVersion = 1
)

// JournalPrefix is the prefix of every journal entry.
func (t *Table) JournalPrefix() string { return t.prefix + "journal/" }

// JournalKey is the journal entry of the μ-shard name.
func (t *Table) JournalKey(name string) string { return t.JournalPrefix() + name }

// Pending is one journal entry: a move of Name that made Epoch and has not
// settled.
type Pending struct {
	Name  string
	Epoch uint64
}

func encodeJournal(epoch uint64) []byte {
	return binary.AppendUvarint([]byte{journalMagic, journalVersion}, epoch)
}

// decodeJournal parses a journal entry's value.
func decodeJournal(v []byte) (uint64, error) {
	if len(v) < 3 || v[0] != journalMagic || v[1] != journalVersion {
		return 0, fmt.Errorf("%w: journal entry header", errCorrupt)
	}
	e, n := binary.Uvarint(v[2:])
	if n <= 0 || n != len(v)-2 || e == 0 {
		return 0, fmt.Errorf("%w: journal entry epoch", errCorrupt)
	}
	return e, nil
}

// Journal lists the unfinished migrations, in name order, read at one
// revision. An entry that does not decode is an error: a successor must
// not silently leave a move half done.
func (t *Table) Journal(ctx context.Context) ([]Pending, error) {
	rows, _, err := t.s.List(ctx, t.JournalPrefix())
	if err != nil {
		return nil, err
	}
	out := make([]Pending, 0, len(rows))
	for _, r := range rows {
		e, err := decodeJournal(r.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.Key, err)
		}
		out = append(out, Pending{Name: r.Key[len(t.JournalPrefix()):], Epoch: e})
	}
	return out, nil
}

// DropJournal deletes the journal entry of name if the row is Stable: an
// entry a successor cannot act on (the row settled, or is gone). Fenced on
// l. It reports whether the row was stable (or absent) and the entry gone.
func (t *Table) DropJournal(ctx context.Context, l store.Leadership, name string) (bool, error) {
	row, _, err := t.s.Get(ctx, t.Key(name))
	if err != nil {
		return false, err
	}
	if row.Exists() {
		e, err := Decode(row.Value)
		if err == nil && e.State != Stable {
			return false, nil
		}
	}
	_, err = store.FencedTxn(ctx, t.s, l, []store.Cond{store.IfModRevision(t.Key(name), row.ModRevision)},
		[]store.Op{store.Delete(t.JournalKey(name))})
	if err != nil {
		return false, fmt.Errorf("loctable: drop journal %s: %w", name, err)
	}
	return true, nil
}
