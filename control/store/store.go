package store

import (
	"context"
	"errors"
	"fmt"
)

// Errors shared by every implementation. Callers test them with errors.Is.
var (
	// ErrClosed: the store (or this client of it) was closed or crashed.
	ErrClosed = errors.New("store: closed")
	// ErrUnavailable: the store cannot be reached now; the caller may retry.
	ErrUnavailable = errors.New("store: unavailable")
	// ErrFenced: a leader write was refused because the writer no longer
	// holds the election key it was fenced on. A deposed leader must stop.
	ErrFenced = errors.New("store: fenced: not the leader any more")
	// ErrConflict: a compare-and-swap lost a race; re-read and decide again.
	ErrConflict = errors.New("store: conflict")
	// ErrStaleVersion: a versioned publication did not follow the stored
	// version (see Publish).
	ErrStaleVersion = errors.New("store: version does not follow the stored one")
)

// LeaseID names a lease. Rows written with a lease disappear when it
// expires or is revoked. Zero means no lease.
type LeaseID int64

// Row is one versioned key/value row.
//
// Invariant: a row that exists has CreateRevision > 0, ModRevision >=
// CreateRevision and Version >= 1. The zero Row (with only Key set) stands
// for an absent key.
type Row struct {
	Key   string
	Value []byte
	// CreateRevision is the store revision at which the key was last
	// created; it changes when the key is deleted and written again, which
	// is what makes it a fence token for election keys.
	CreateRevision int64
	// ModRevision is the store revision of the last write of the key.
	ModRevision int64
	// Version counts the writes since the key was created.
	Version int64
	Lease   LeaseID
}

// Exists reports whether the row stands for a present key.
func (r Row) Exists() bool { return r.CreateRevision > 0 }

// CondField is what a Cond compares.
type CondField uint8

// The fields a Cond can compare.
const (
	CondModRevision CondField = iota + 1
	CondCreateRevision
	CondVersion
)

func (f CondField) String() string {
	switch f {
	case CondModRevision:
		return "mod_revision"
	case CondCreateRevision:
		return "create_revision"
	case CondVersion:
		return "version"
	}
	return fmt.Sprintf("CondField(%d)", uint8(f))
}

// Cond is one comparison of a transaction, built by IfModRevision,
// IfAbsent, IfCreateRevision or IfVersion. All conditions of a
// transaction must hold for its operations to apply.
type Cond struct {
	Key   string
	field CondField
	value int64
}

// IfModRevision holds when key was last written at revision rev (rev 0:
// the key is absent). It is the compare-and-swap of a read-modify-write.
func IfModRevision(key string, rev int64) Cond {
	return Cond{Key: key, field: CondModRevision, value: rev}
}

// IfAbsent holds when key does not exist.
func IfAbsent(key string) Cond { return IfModRevision(key, 0) }

// IfCreateRevision holds when key exists and was created at revision rev.
// Leadership.Fence returns one: the election key keeps its create revision
// exactly as long as its holder stays leader.
func IfCreateRevision(key string, rev int64) Cond {
	return Cond{Key: key, field: CondCreateRevision, value: rev}
}

// IfVersion holds when key has been written v times since its creation
// (v 0: absent).
func IfVersion(key string, v int64) Cond { return Cond{Key: key, field: CondVersion, value: v} }

// Holds evaluates c against the current row of c.Key. Implementations
// without server-side transactions use it; it also states the semantics.
func (c Cond) Holds(r Row) bool {
	switch c.field {
	case CondModRevision:
		return r.ModRevision == c.value
	case CondCreateRevision:
		return r.Exists() && r.CreateRevision == c.value
	case CondVersion:
		return r.Version == c.value
	}
	return false
}

// IsFence reports whether c compares a create revision (a leader fence).
func (c Cond) IsFence() bool { return c.field == CondCreateRevision }

// Field is what c compares; implementations that translate conditions
// (etcd) read it with Value.
func (c Cond) Field() CondField { return c.field }

// Value is the revision or version c compares with.
func (c Cond) Value() int64 { return c.value }

func (c Cond) String() string { return fmt.Sprintf("%s(%q)=%d", c.field, c.Key, c.value) }

// Op is one write of a transaction, built by Put, PutLease, Delete or
// DeletePrefix.
type Op struct {
	Key    string
	Value  []byte
	Lease  LeaseID
	Delete bool
	// Prefix makes a Delete remove every key that starts with Key.
	Prefix bool
}

// Put writes value at key.
func Put(key string, value []byte) Op { return Op{Key: key, Value: value} }

// PutLease writes value at key, bound to lease: the row disappears with it.
func PutLease(key string, value []byte, lease LeaseID) Op {
	return Op{Key: key, Value: value, Lease: lease}
}

// Delete removes key.
func Delete(key string) Op { return Op{Key: key, Delete: true} }

// DeletePrefix removes every key under prefix.
func DeletePrefix(prefix string) Op { return Op{Key: prefix, Delete: true, Prefix: true} }

// TxnResult is what a transaction did.
type TxnResult struct {
	// Succeeded: every condition held and every operation applied.
	Succeeded bool
	// Revision is the store revision after the transaction.
	Revision int64
	// Current holds, when the transaction failed, the rows of the
	// conditions' keys in the order of the conditions (absent keys as a
	// Row with only Key set), read atomically with the failed comparison,
	// so the caller learns in one round trip what it lost to.
	Current []Row
}

// FenceLost reports whether a failed transaction failed on a fence
// condition among conds (see IfCreateRevision).
func (r TxnResult) FenceLost(conds []Cond) bool {
	if r.Succeeded || len(r.Current) != len(conds) {
		return false
	}
	for i, c := range conds {
		if c.IsFence() && !c.Holds(r.Current[i]) {
			return true
		}
	}
	return false
}

// Reader reads rows.
type Reader interface {
	// Get returns the row at key, or a Row with only Key set when absent,
	// and the store revision it was read at.
	Get(ctx context.Context, key string) (Row, int64, error)
	// List returns the rows under prefix in key order and the store
	// revision they were read at (one consistent snapshot).
	List(ctx context.Context, prefix string) ([]Row, int64, error)
}

// Writer applies transactions.
type Writer interface {
	// Txn applies ops atomically, as one revision, if every cond holds.
	// A transaction that changes nothing does not create a revision.
	Txn(ctx context.Context, conds []Cond, ops []Op) (TxnResult, error)
}

// Watcher opens watches.
type Watcher interface {
	// Watch follows the rows under prefix from revision fromRev (0: from
	// a snapshot of now). See Watch for the delivery contract. Prefixes
	// are plain string prefixes ("maps/l2" covers "maps/l2x"), so callers
	// end them with a separator.
	Watch(prefix string, fromRev int64) Watch
}

// Watch is one watch of a prefix. It is pulled by one goroutine, its
// consumer's: the consumer owns the loop that calls Next and calls Close
// when done. Next and Close may be called from different goroutines.
type Watch interface {
	// Next blocks until there is something to deliver or ctx ends.
	//
	// Delivery contract:
	//   - Batches come in revision order and each revision's changes come
	//     whole: after a batch at revision R, the consumer's copy of the
	//     prefix equals the store's at R.
	//   - A Reset batch carries every row under the prefix at its revision
	//     (as puts): the consumer replaces its copy. The first batch of a
	//     watch from revision 0 is a Reset; so is the batch after the store
	//     compacted history the watch had not read yet (for instance during
	//     a disconnection). Otherwise a watch resumed after a disconnection
	//     continues with the next revision: nothing is lost or repeated.
	//   - Transient unavailability is retried inside Next; Next returns an
	//     error only for ctx, ErrClosed, or a failure it cannot retry.
	Next(ctx context.Context) (Batch, error)
	// Close ends the watch and releases its resources. Idempotent.
	Close()
}

// Batch is what one Watch.Next delivers.
type Batch struct {
	// Reset: Changes is the whole prefix at Revision (all puts).
	Reset bool
	// Revision: the consumer's view is the store's at this revision.
	Revision int64
	Changes  []Change
}

// Change is one put or delete of a row. A delete carries the key and the
// revision of the delete (ModRevision) and nothing else.
type Change struct {
	Deleted bool
	Row     Row
}

// Sessions grant liveness leases.
type Sessions interface {
	// NewSession grants a lease of ttl seconds and keeps it alive for as
	// long as this client lives and the store answers. Rows written with
	// the session's lease vanish when the process holding it dies.
	NewSession(ctx context.Context, ttlSeconds int) (Session, error)
}

// Session is a kept-alive lease.
type Session interface {
	Lease() LeaseID
	// Done is closed when the lease is gone: expired, revoked, or the
	// client closed. Everything fenced on it must stop.
	Done() <-chan struct{}
	// Close revokes the lease (its rows vanish now) and stops keeping it
	// alive. Idempotent.
	Close() error
}

// Leases grant leases that nobody keeps alive: a row put with one lives
// for the lease's TTL after the grant unless it is put again with another.
// A row that several processes refresh (a hot-key mark) stays while any of
// them still writes it and goes TTL after the last write, measured on the
// store's clock, so the processes' clocks need not agree.
type Leases interface {
	// GrantLease grants a lease of ttl seconds that expires ttl after the
	// grant. etcd may raise a TTL below its minimum (about 1.5 election
	// timeouts) to that minimum.
	GrantLease(ctx context.Context, ttlSeconds int) (LeaseID, error)
}

// Elections run leader elections, one per loop name.
type Elections interface {
	// Campaign blocks until sess holds the leadership of name (or ctx
	// ends), then returns it. value is published as the leader's row (an
	// address, a process name).
	Campaign(ctx context.Context, sess Session, name, value string) (Leadership, error)
}

// Leadership is a won election.
type Leadership interface {
	// Key is the election key this leader holds.
	Key() string
	// Fence is the condition every write of this leader must carry: it
	// holds exactly while this leadership lasts.
	Fence() Cond
	// Done is closed when the leadership is known to be lost (its session
	// ended or it resigned). Knowing late is safe: fenced writes fail.
	Done() <-chan struct{}
	// Resign gives the leadership up so that the next candidate wins now.
	Resign(ctx context.Context) error
}

// Store is the whole control-plane state store. Consumers should ask for
// the smallest of the interfaces above that they need.
type Store interface {
	Reader
	Writer
	Watcher
	Sessions
	Leases
	Elections
	// Close ends this client: its watches end, its sessions stop being
	// kept alive (their leases expire on their own). Bounded; idempotent.
	Close() error
}

// ElectionPrefix is the prefix under which the candidates of the election
// called name keep their rows. The leader is the candidate row with the
// lowest create revision (see LeaderOf); watch this prefix to observe it.
func ElectionPrefix(name string) string { return "election/" + name + "/" }

// LeaderOf returns the leader among the candidate rows of one election
// prefix: the one created first. ok is false when there is none.
func LeaderOf(rows []Row) (leader Row, ok bool) {
	for _, r := range rows {
		if !r.Exists() {
			continue
		}
		if !ok || r.CreateRevision < leader.CreateRevision {
			leader, ok = r, true
		}
	}
	return leader, ok
}

// Leader reads the current leader of the election called name.
func Leader(ctx context.Context, r Reader, name string) (Row, bool, error) {
	rows, _, err := r.List(ctx, ElectionPrefix(name))
	if err != nil {
		return Row{}, false, err
	}
	l, ok := LeaderOf(rows)
	return l, ok, nil
}

// PutRow writes one row without conditions.
func PutRow(ctx context.Context, w Writer, key string, value []byte) (int64, error) {
	res, err := w.Txn(ctx, nil, []Op{Put(key, value)})
	return res.Revision, err
}

// DeleteRow removes one row without conditions.
func DeleteRow(ctx context.Context, w Writer, key string) (int64, error) {
	res, err := w.Txn(ctx, nil, []Op{Delete(key)})
	return res.Revision, err
}

// CompareAndSwap writes value at key if the key was last written at
// revision rev (0: absent). It returns ErrConflict with the current row
// when it was not.
func CompareAndSwap(ctx context.Context, w Writer, key string, rev int64, value []byte) (Row, error) {
	conds := []Cond{IfModRevision(key, rev)}
	res, err := w.Txn(ctx, conds, []Op{Put(key, value)})
	if err != nil {
		return Row{}, err
	}
	if !res.Succeeded {
		return res.Current[0], ErrConflict
	}
	return Row{}, nil
}

// FencedTxn applies ops if the leadership still holds and conds hold. It
// returns ErrFenced when the fence failed and ErrConflict when only conds
// did; res.Current then starts with the fence key's row.
func FencedTxn(ctx context.Context, w Writer, l Leadership, conds []Cond, ops []Op) (TxnResult, error) {
	all := append([]Cond{l.Fence()}, conds...)
	res, err := w.Txn(ctx, all, ops)
	if err != nil {
		return res, err
	}
	if res.Succeeded {
		return res, nil
	}
	if res.FenceLost(all) {
		return res, ErrFenced
	}
	return res, ErrConflict
}
