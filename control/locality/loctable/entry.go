package loctable

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/strata-cache/strata/tiers/locality/loccache"
)

// State is a μ-shard's migration state. It is loccache's type, so a row
// and a cached location speak of the same states without converting; the
// values are the stored encoding.
type State = loccache.State

// The states, in the order a migration passes through them.
const (
	// Prepare: Owner is the destination; Source still serves, and deletes
	// at Owner what it writes, until every strata saw the row.
	Prepare = loccache.Prepare
	// Migrating: Owner serves; for the grace window its misses read
	// Source, and its writes and deletes also delete at Source.
	Migrating = loccache.Migrating
	// Stable: Owner serves the μ-shard alone.
	Stable = loccache.Stable
)

// MaxHistory is how many moves a row remembers (oldest dropped first).
const MaxHistory = 8

// maxName bounds a region name or a reason in a row, so that a corrupt
// row cannot make Decode allocate much.
const maxName = 255

// Move is one entry of a μ-shard's history.
type Move struct {
	// Epoch is the ownership epoch the move started.
	Epoch uint64
	At    time.Time
	// From is "" for the creation.
	From, To string
	// Reason is why: "created", a placement.Reason, "manual", ...
	Reason string
}

// Location is the row as the location caches hold it.
func (e Entry) Location() loccache.Location {
	return loccache.Location{Owner: e.Owner, Epoch: e.Epoch, State: e.State, Source: e.Source}
}

// Entry is one row of the table.
//
// Invariant (of stored rows): Epoch >= 1; State is Stable, Prepare or
// Migrating; Source is "" when Stable and names another region than
// Owner otherwise; len(History) <= MaxHistory.
type Entry struct {
	Owner string
	Epoch uint64
	State State
	// Source is the previous owner while Prepare or Migrating.
	Source  string
	History []Move
}

// The encoding, version 1:
//
//	'L' 1 uvarint(epoch) state str(owner) str(source) uvarint(n) n×move
//	move = uvarint(epoch) varint(unix nanoseconds) str(from) str(to) str(reason)
//	str  = uvarint(len) bytes
const (
	entryMagic   = 'L'
	entryVersion = 1
)

// Encode returns e's row value. It keeps only the last MaxHistory moves.
func Encode(e Entry) []byte {
	h := e.History
	if len(h) > MaxHistory {
		h = h[len(h)-MaxHistory:]
	}
	b := make([]byte, 0, 16+len(e.Owner)+len(e.Source)+len(h)*24)
	b = append(b, entryMagic, entryVersion)
	b = binary.AppendUvarint(b, e.Epoch)
	b = append(b, byte(e.State))
	b = appendStr(b, e.Owner)
	b = appendStr(b, e.Source)
	b = binary.AppendUvarint(b, uint64(len(h)))
	for _, m := range h {
		b = binary.AppendUvarint(b, m.Epoch)
		b = binary.AppendVarint(b, m.At.UnixNano())
		b = appendStr(b, m.From)
		b = appendStr(b, m.To)
		b = appendStr(b, m.Reason)
	}
	return b
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// errCorrupt is wrapped by every Decode error.
var errCorrupt = errors.New("loctable: corrupt row")

// Decode parses a row value written by Encode, and checks the Entry
// invariant. Times come back in UTC.
func Decode(v []byte) (Entry, error) {
	d := decoder{b: v}
	if len(v) < 2 || v[0] != entryMagic {
		return Entry{}, fmt.Errorf("%w: missing header", errCorrupt)
	}
	if v[1] != entryVersion {
		return Entry{}, fmt.Errorf("%w: encoding version %d", errCorrupt, v[1])
	}
	d.b = v[2:]
	var e Entry
	e.Epoch = d.uvarint()
	e.State = State(d.byte())
	e.Owner = d.str()
	e.Source = d.str()
	n := d.uvarint()
	if d.err == nil && n > MaxHistory {
		return Entry{}, fmt.Errorf("%w: %d history entries", errCorrupt, n)
	}
	for i := uint64(0); i < n && d.err == nil; i++ {
		m := Move{Epoch: d.uvarint(), At: time.Unix(0, d.varint()).UTC()}
		m.From, m.To, m.Reason = d.str(), d.str(), d.str()
		e.History = append(e.History, m)
	}
	switch {
	case d.err != nil:
		return Entry{}, d.err
	case len(d.b) != 0:
		return Entry{}, fmt.Errorf("%w: %d trailing bytes", errCorrupt, len(d.b))
	case e.Epoch == 0:
		return Entry{}, fmt.Errorf("%w: epoch 0", errCorrupt)
	case e.State != Stable && e.State != Migrating && e.State != Prepare:
		return Entry{}, fmt.Errorf("%w: state %d", errCorrupt, e.State)
	case e.Owner == "":
		return Entry{}, fmt.Errorf("%w: no owner", errCorrupt)
	case e.State == Stable && e.Source != "":
		return Entry{}, fmt.Errorf("%w: a stable row with a source", errCorrupt)
	case e.State != Stable && (e.Source == "" || e.Source == e.Owner):
		return Entry{}, fmt.Errorf("%w: a moving row without another source", errCorrupt)
	}
	return e, nil
}

// decoder reads fields until its first error, which it keeps.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: bad %s", errCorrupt, what)
	}
	d.b = nil
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("uvarint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail("byte")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) str() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > maxName || n > uint64(len(d.b)) {
		d.fail("string length")
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
