package loctable

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/strata-cache/strata/control/store"
)

// DefaultPrefix is where locality routing keeps its state in the store
// (the etcd store puts its own namespace, "strata/" by default, before
// it). The table's rows are under Prefix+"rows/", its journal under
// Prefix+"journal/".
const DefaultPrefix = "locality/"

// Store is what the table needs of the control store.
type Store interface {
	store.Reader
	store.Writer
}

// Table reads and writes location rows.
type Table struct {
	s      Store
	prefix string
}

// New returns the table under prefix ("" means DefaultPrefix; otherwise
// it should end in "/") in s.
func New(s Store, prefix string) *Table {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return &Table{s: s, prefix: prefix}
}

// Prefix is the table's prefix (New's, defaulted).
func (t *Table) Prefix() string { return t.prefix }

// RowsPrefix is the prefix of every row: watch it to follow the table.
func (t *Table) RowsPrefix() string { return t.prefix + "rows/" }

// Key is the row key of the μ-shard name.
func (t *Table) Key(name string) string { return t.RowsPrefix() + name }

// Name is the μ-shard name of a row key, and false for a key that is not
// one of the table's rows.
func (t *Table) Name(key string) (string, bool) {
	p := t.RowsPrefix()
	if len(key) <= len(p) || key[:len(p)] != p || IsMarker(key[len(p):]) {
		return "", false
	}
	return key[len(p):], true
}

// markerStart starts the name of a marker row: a row among the μ-shards'
// that is none (no rule gives a name with a NUL byte). Markers are
// written for their revision (a watch of the rows delivers them in
// order); Name refuses them, so no reader takes one for a μ-shard.
const markerStart = "\x00"

// MarkerKey is the key of the marker row called name.
func (t *Table) MarkerKey(name string) string { return t.RowsPrefix() + markerStart + name }

// IsMarker reports whether a name under the rows prefix is a marker's.
func IsMarker(name string) bool { return strings.HasPrefix(name, markerStart) }

// Get returns the μ-shard's row, and false when it has none.
func (t *Table) Get(ctx context.Context, name string) (Entry, bool, error) {
	e, _, ok, err := t.Read(ctx, name)
	return e, ok, err
}

// Read is Get that also returns the store revision of the row's last
// write (what a strata must have applied to know the row).
func (t *Table) Read(ctx context.Context, name string) (Entry, int64, bool, error) {
	row, _, err := t.s.Get(ctx, t.Key(name))
	if err != nil || !row.Exists() {
		return Entry{}, 0, false, err
	}
	e, err := Decode(row.Value)
	if err != nil {
		return Entry{}, 0, false, fmt.Errorf("%s: %w", row.Key, err)
	}
	return e, row.ModRevision, true, nil
}

// Create makes the row of a μ-shard seen for the first time, owned by
// owner at epoch 1, Stable, with its creation as the first move. It writes
// only if no row exists; otherwise it writes nothing and returns the row
// that is there. created reports which happened: among any number of
// concurrent callers, exactly one gets true, and all get the same Entry.
//
// With l non-nil the write is fenced on l too, and fails with
// store.ErrFenced once l no longer leads; nil l is for a store with one
// writer (a strata alone on the memory store).
//
// also are more operations to apply in the same transaction if, and only
// if, the row is created (the placement service deletes the create
// request so).
func (t *Table) Create(ctx context.Context, l store.Leadership, name, owner string, now time.Time, also ...store.Op) (e Entry, created bool, err error) {
	if name == "" {
		return Entry{}, false, errors.New("loctable: create: empty μ-shard name")
	}
	if owner == "" || len(owner) > maxName {
		return Entry{}, false, fmt.Errorf("loctable: create %s: owner %q: must be 1 to %d bytes", name, owner, maxName)
	}
	key := t.Key(name)
	e = Entry{Owner: owner, Epoch: 1, State: Stable,
		History: []Move{{Epoch: 1, At: now.UTC(), To: owner, Reason: "created"}}}
	conds := []store.Cond{store.IfAbsent(key)}
	ops := append([]store.Op{store.Put(key, Encode(e))}, also...)
	var res store.TxnResult
	if l != nil {
		res, err = store.FencedTxn(ctx, t.s, l, conds, ops)
		if errors.Is(err, store.ErrConflict) {
			err = nil // the row exists: res.Current says what it holds
		}
		conds = append([]store.Cond{l.Fence()}, conds...) // res.Current follows these
	} else {
		res, err = t.s.Txn(ctx, conds, ops)
	}
	if err != nil {
		return Entry{}, false, fmt.Errorf("loctable: create %s: %w", name, err)
	}
	if res.Succeeded {
		return e, true, nil
	}
	if len(res.Current) != len(conds) {
		return Entry{}, false, fmt.Errorf("loctable: create %s: the store returned %d rows for %d conditions", name, len(res.Current), len(conds))
	}
	cur := res.Current[len(conds)-1] // the row under key, read with the comparison
	got, err := Decode(cur.Value)
	if err != nil {
		return Entry{}, false, fmt.Errorf("%s: %w", key, err)
	}
	return got, false, nil
}
