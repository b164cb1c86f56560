package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
)

// A versioned object (a shard map, a tuned threshold set) is one row whose
// value is the object's version followed by its payload:
//
//	'V' uvarint(version) payload
//
// The version is the object's own, chosen by its publisher and growing by
// one per publication; it is not the store revision, so it survives a
// restore of the store from a backup and means the same in every store.

const versionedMagic = 'V'

// EncodeVersioned returns the row value of payload at version.
func EncodeVersioned(version uint64, payload []byte) []byte {
	b := make([]byte, 0, 1+binary.MaxVarintLen64+len(payload))
	b = append(b, versionedMagic)
	b = binary.AppendUvarint(b, version)
	return append(b, payload...)
}

// DecodeVersioned parses a row value written by EncodeVersioned. The
// payload aliases value. Version 0 is never published and is refused.
func DecodeVersioned(value []byte) (version uint64, payload []byte, err error) {
	if len(value) == 0 || value[0] != versionedMagic {
		return 0, nil, errors.New("store: versioned value: missing header")
	}
	v, n := binary.Uvarint(value[1:])
	if n <= 0 {
		return 0, nil, errors.New("store: versioned value: bad version")
	}
	if v == 0 {
		return 0, nil, errors.New("store: versioned value: version 0")
	}
	return v, value[1+n:], nil
}

// Versioned is one publication of a versioned object.
type Versioned struct {
	Version uint64
	Payload []byte
	// ModRevision is the store revision the publication was written at.
	ModRevision int64
}

// ReadVersioned returns the object stored at key; Version 0 when there is
// none yet.
func ReadVersioned(ctx context.Context, r Reader, key string) (Versioned, error) {
	row, _, err := r.Get(ctx, key)
	if err != nil || !row.Exists() {
		return Versioned{}, err
	}
	v, p, err := DecodeVersioned(row.Value)
	if err != nil {
		return Versioned{}, fmt.Errorf("%s: %w", key, err)
	}
	return Versioned{Version: v, Payload: p, ModRevision: row.ModRevision}, nil
}

// ReadWriter is what a publisher needs.
type ReadWriter interface {
	Reader
	Writer
}

// Publish writes payload as version of the object at key, fenced on the
// leadership: it succeeds only if the stored version is version-1 (none
// stored for version 1) and l still leads, so versions only grow and a
// deposed leader cannot publish.
//
// The object is one row, so it must fit one store request (etcd's default
// --max-request-bytes is 1.5 MiB; a map of 4096 shards is a few KiB).
//
// Retrying a publication whose reply was lost is safe: if the stored
// object is already exactly (version, payload), Publish returns nil. It
// returns ErrFenced when l no longer leads, and an error wrapping
// ErrStaleVersion, with the stored version, when another publication got
// there first: the caller re-reads (ReadVersioned) and computes again.
func Publish(ctx context.Context, s ReadWriter, l Leadership, key string, version uint64, payload []byte) error {
	if version == 0 {
		return errors.New("store: publish version 0")
	}
	for {
		row, _, err := s.Get(ctx, key)
		if err != nil {
			return err
		}
		var stored uint64
		if row.Exists() {
			v, p, err := DecodeVersioned(row.Value)
			if err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
			if v == version && bytes.Equal(p, payload) {
				return nil
			}
			stored = v
		}
		if stored != version-1 {
			return &StaleVersionError{Key: key, Stored: stored, Offered: version}
		}
		_, err = FencedTxn(ctx, s, l, []Cond{IfModRevision(key, row.ModRevision)},
			[]Op{Put(key, EncodeVersioned(version, payload))})
		if errors.Is(err, ErrConflict) {
			continue // someone wrote between our read and write: decide on what is there now
		}
		return err
	}
}

// StaleVersionError says which version is stored when a publication did
// not follow it. It matches ErrStaleVersion.
type StaleVersionError struct {
	Key     string
	Stored  uint64
	Offered uint64
}

func (e *StaleVersionError) Error() string {
	return fmt.Sprintf("store: publish %s version %d: stored version is %d", e.Key, e.Offered, e.Stored)
}

func (e *StaleVersionError) Is(target error) bool { return target == ErrStaleVersion }

// VersionWatch delivers the publications of one versioned object in
// strictly increasing version order. Watch batches can carry an older
// row than one already delivered (a Reset after compaction reads the
// whole prefix again; a consumer may be handed events late), so it
// remembers the highest version delivered and drops anything not above
// it. Deletion of the row is ignored: an object never goes back.
//
// One goroutine, the consumer's, calls Next.
type VersionWatch struct {
	key  string
	w    Watch
	last uint64
}

// WatchVersioned follows the object at key, delivering only versions
// above after (0: everything, starting with the stored one).
func WatchVersioned(w Watcher, key string, after uint64) *VersionWatch {
	return &VersionWatch{key: key, w: w.Watch(key, 0), last: after}
}

// Last is the highest version delivered (or the after of WatchVersioned).
func (v *VersionWatch) Last() uint64 { return v.last }

// Next blocks until a version above Last is published, and returns it.
// A row that does not decode is returned as an error wrapping the key;
// the watch stays usable.
func (v *VersionWatch) Next(ctx context.Context) (Versioned, error) {
	for {
		b, err := v.w.Next(ctx)
		if err != nil {
			return Versioned{}, err
		}
		var best *Versioned
		var bad error
		for _, c := range b.Changes {
			if c.Deleted || c.Row.Key != v.key {
				continue
			}
			ver, p, err := DecodeVersioned(c.Row.Value)
			if err != nil {
				bad = fmt.Errorf("%s at revision %d: %w", v.key, c.Row.ModRevision, err)
				continue
			}
			if ver > v.last && (best == nil || ver > best.Version) {
				best = &Versioned{Version: ver, Payload: p, ModRevision: c.Row.ModRevision}
			}
		}
		if best != nil {
			v.last = best.Version
			return *best, nil
		}
		if bad != nil {
			return Versioned{}, bad
		}
	}
}

// Close ends the watch.
func (v *VersionWatch) Close() { v.w.Close() }
