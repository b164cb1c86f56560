package locsvc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Batch is one shipment of a strata's access counts: the accesses its
// clients made, by μ-shard, over one counter interval that ended At.
type Batch struct {
	Region string
	At     time.Time
	Counts []Count
}

// Count is one μ-shard's accesses in a batch.
type Count struct {
	Name string
	N    uint64
	// Remote: at least one of the N accesses was served by another
	// region; the placement service re-evaluates only such μ-shards.
	Remote bool
}

// The encoding, version 2, chosen to be small (counter traffic is
// reported as a fraction of data traffic). The region is named once per
// batch and each μ-shard's name is front-coded against the one before it
// (the shipper sorts them, so ids of one rule share their prefix):
//
//	'A' 2 varint(unix nanoseconds) str(region) uvarint(n) n×count
//	count = uvarint(shared) str(suffix) uvarint(N<<1 | remote)
//	str   = uvarint(len) bytes
//
// where a count's name is the first shared bytes of the previous name
// followed by suffix. Version 1 (no shared prefix: count = str(name)
// uvarint(N<<1 | remote)) is still read, from strata not yet upgraded.
const (
	batchMagic   = 'A'
	batchVersion = 2
	// maxField bounds a region or μ-shard name in a batch, so a corrupt
	// one cannot make Decode allocate much.
	maxField = 1 << 10
)

var errBatch = errors.New("locsvc: corrupt counter batch")

// appendBatchHeader starts an encoded batch in b.
func appendBatchHeader(b []byte, region string, at time.Time, n int) []byte {
	b = append(b, batchMagic, batchVersion)
	b = binary.AppendVarint(b, at.UnixNano())
	b = binary.AppendUvarint(b, uint64(len(region)))
	b = append(b, region...)
	return binary.AppendUvarint(b, uint64(n))
}

// appendCount appends c, front-coded against prev.
func appendCount(b []byte, prev string, c Count) []byte {
	shared := 0
	for shared < len(prev) && shared < len(c.Name) && prev[shared] == c.Name[shared] {
		shared++
	}
	b = binary.AppendUvarint(b, uint64(shared))
	b = binary.AppendUvarint(b, uint64(len(c.Name)-shared))
	b = append(b, c.Name[shared:]...)
	v := c.N << 1
	if c.Remote {
		v |= 1
	}
	return binary.AppendUvarint(b, v)
}

// countSize bounds what c adds to an encoded batch (no shared prefix).
func countSize(c Count) int {
	return 1 + uvarintLen(uint64(len(c.Name))) + len(c.Name) + uvarintLen(c.N<<1|1)
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// EncodeBatch returns the batch's row value.
func EncodeBatch(bt Batch) []byte {
	b := appendBatchHeader(make([]byte, 0, 32+len(bt.Counts)*8), bt.Region, bt.At, len(bt.Counts))
	prev := ""
	for _, c := range bt.Counts {
		b = appendCount(b, prev, c)
		prev = c.Name
	}
	return b
}

// DecodeBatch parses a row value written by EncodeBatch. Times come back
// in UTC.
func DecodeBatch(v []byte) (Batch, error) {
	if len(v) < 2 || v[0] != batchMagic || (v[1] != 1 && v[1] != batchVersion) {
		return Batch{}, fmt.Errorf("%w: header", errBatch)
	}
	front := v[1] == batchVersion
	d := v[2:]
	at, k := binary.Varint(d)
	if k <= 0 {
		return Batch{}, fmt.Errorf("%w: time", errBatch)
	}
	d = d[k:]
	var bt Batch
	bt.At = time.Unix(0, at).UTC()
	var ok bool
	if bt.Region, d, ok = str(d); !ok || bt.Region == "" {
		return Batch{}, fmt.Errorf("%w: region", errBatch)
	}
	n, k := binary.Uvarint(d)
	// Every count takes at least two bytes: a bound before allocating.
	if k <= 0 || n > uint64(len(d)-k)/2 {
		return Batch{}, fmt.Errorf("%w: count of entries", errBatch)
	}
	d = d[k:]
	bt.Counts = make([]Count, 0, n)
	prev := ""
	for i := uint64(0); i < n; i++ {
		var c Count
		shared := uint64(0)
		if front {
			if shared, k = binary.Uvarint(d); k <= 0 || shared > uint64(len(prev)) {
				return Batch{}, fmt.Errorf("%w: entry %d shared prefix", errBatch, i)
			}
			d = d[k:]
		}
		var suffix string
		if suffix, d, ok = str(d); !ok || uint64(len(suffix))+shared > maxField {
			return Batch{}, fmt.Errorf("%w: entry %d name", errBatch, i)
		}
		if c.Name = prev[:shared] + suffix; c.Name == "" {
			return Batch{}, fmt.Errorf("%w: entry %d name", errBatch, i)
		}
		prev = c.Name
		x, k := binary.Uvarint(d)
		if k <= 0 {
			return Batch{}, fmt.Errorf("%w: entry %d count", errBatch, i)
		}
		d = d[k:]
		c.N, c.Remote = x>>1, x&1 == 1
		bt.Counts = append(bt.Counts, c)
	}
	if len(d) != 0 {
		return Batch{}, fmt.Errorf("%w: %d trailing bytes", errBatch, len(d))
	}
	return bt, nil
}

func str(d []byte) (string, []byte, bool) {
	n, k := binary.Uvarint(d)
	if k <= 0 || n > maxField || n > uint64(len(d)-k) {
		return "", nil, false
	}
	d = d[k:]
	return string(d[:n]), d[n:], true
}
