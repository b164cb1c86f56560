package embedded

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"time"
)

// Defaults, chosen to match a stock memcached started without -m or -I.
const (
	DefaultMaxBytes    = 64 << 20
	DefaultMaxItemSize = 1 << 20

	// ItemOverhead is the fixed cost charged per item on top of its key and
	// value: the entry record (72 bytes), its 8-byte index slot, and the
	// slack of both tables as they grow (the index is 3/8 to 3/4 full).
	// TestItemOverheadCoversHeap fails if it ever exceeds the charge.
	// The Go allocator's rounding of key+value buffers to its size classes
	// (at most 12.5% above 128 bytes) is not included.
	ItemOverhead = 128

	// minItemSize is memcached's floor for -I.
	minItemSize = 1024
	// maxShards caps the shard count: beyond it contention is already nil
	// and each shard's LRU gets too short to approximate a global one.
	maxShards = 256
	// shardItemFactor: the default shard count keeps every shard at least
	// this many maximum-sized items large, so one big item never flushes a
	// whole shard.
	shardItemFactor = 4
)

// ErrInvalidConfig is wrapped by every error Config.validate returns.
var ErrInvalidConfig = errors.New("embedded: invalid config")

// ErrInvalidRequest is wrapped by the Err of a StatusError result when the
// request itself is malformed (unknown kind, a mode that does not belong to
// the kind). It is the issuer's bug, never the store's.
var ErrInvalidRequest = errors.New("embedded: invalid request")

// Config sizes a Store. The zero value is valid and means the defaults.
type Config struct {
	// MaxBytes bounds memory: the sum over items of
	// len(key)+len(value)+ItemOverhead never exceeds it. Memory is taken as
	// items arrive, never reserved up front. Default 64 MiB.
	MaxBytes int64

	// MaxItemSize is memcached's -I: an item whose memcached footprint
	// (see itemTotal: header, key, flags and value) exceeds it is refused
	// with StatusTooLarge, exactly where memcached says "object too large
	// for cache". With a one-byte key and zero flags the largest value is
	// MaxItemSize-60. Default 1 MiB, or less in a store so small that a
	// shard could not hold a 1 MiB item; minimum 1024.
	MaxItemSize int

	// Shards is the number of independently locked partitions, a power of
	// two. Each holds MaxBytes/Shards and runs its own LRU, so eviction order
	// is exact within a shard and approximate across shards. Default: the
	// largest power of two up to 256 that leaves every shard room for four
	// maximum-sized items (16 for 64 MiB, 256 for 1 GiB).
	Shards int

	// AppendVivify makes ms in append or prepend mode with the N flag create
	// the item from the appended data on a miss, as memcached does from
	// 1.6.19 on. memcached 1.6.18, the reference, ignores N there and
	// answers NS; that is the default.
	AppendVivify bool

	// Now returns the current Unix time in seconds; every expiry, flush and
	// access-time decision reads time through it, once per operation.
	// Default: the wall clock, read on every operation (a few tens of ns).
	// A caller with a ticker should pass a clock it keeps in an atomic and
	// advances once a second, as memcached does with its current_time.
	Now func() int64

	// Snapshot is the file Save writes the items to and Restore loads them
	// from, so a restarted process starts warm; "" for none. Its directory
	// must exist: the file is written beside it under a temporary name and
	// renamed over it.
	Snapshot string
}

func wallClock() int64 { return time.Now().Unix() }

// FieldError is a refused value of one Config field. It matches
// ErrInvalidConfig under errors.Is.
type FieldError struct {
	Field string // the Config field's Go name, e.g. "MaxBytes"
	Err   error
}

func (e *FieldError) Error() string {
	return ErrInvalidConfig.Error() + ": " + e.Field + ": " + e.Err.Error()
}
func (e *FieldError) Unwrap() error        { return e.Err }
func (e *FieldError) Is(target error) bool { return target == ErrInvalidConfig }

// FieldName returns Field: a configuration reader maps it onto its own key.
func (e *FieldError) FieldName() string { return e.Field }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// Validate reports what New would refuse in c (zero fields mean their
// defaults), as a *FieldError, without building a store.
func (c Config) Validate() error { return c.validate() }

// validate fills defaults and rejects settings that cannot work.
func (c *Config) validate() error {
	if c.MaxBytes == 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.Now == nil {
		c.Now = wallClock
	}
	if err := c.validateSnapshot(); err != nil {
		return err
	}
	if c.MaxBytes < 0 {
		return fieldErr("MaxBytes", "%d is negative", c.MaxBytes)
	}
	if c.MaxItemSize == 0 {
		c.MaxItemSize = DefaultMaxItemSize
		if fit := c.MaxBytes/int64(max(c.Shards, 1)) - ItemOverhead; fit < DefaultMaxItemSize {
			c.MaxItemSize = int(max(fit, minItemSize))
		}
	}
	if c.MaxItemSize < minItemSize {
		return fieldErr("MaxItemSize", "%d is below memcached's minimum of %d", c.MaxItemSize, minItemSize)
	}
	// One item must always fit into an emptied shard, or a legal set could
	// fail for want of memory.
	perItem := int64(c.MaxItemSize) + ItemOverhead
	if c.Shards == 0 {
		n := c.MaxBytes / (shardItemFactor * int64(c.MaxItemSize))
		switch {
		case n < 1:
			c.Shards = 1
		case n >= maxShards:
			c.Shards = maxShards
		default:
			c.Shards = 1 << (bits.Len64(uint64(n)) - 1)
		}
	}
	if c.Shards < 1 || c.Shards > 1<<16 || c.Shards&(c.Shards-1) != 0 {
		return fieldErr("Shards", "%d is not a power of two between 1 and 65536", c.Shards)
	}
	if c.MaxBytes/int64(c.Shards) < perItem {
		return fieldErr("MaxBytes", "%d bytes over %d shards cannot hold one item of the largest size (%d bytes, plus %d of overhead) in each",
			c.MaxBytes, c.Shards, c.MaxItemSize, ItemOverhead)
	}
	return nil
}

// validateSnapshot checks what can be checked before the file is needed:
// that its directory exists and that the path does not name a directory.
func (c *Config) validateSnapshot() error {
	if c.Snapshot == "" {
		return nil
	}
	if fi, err := os.Stat(c.Snapshot); err == nil && fi.IsDir() {
		return fieldErr("Snapshot", "%s is a directory, not a file", c.Snapshot)
	}
	dir := filepath.Dir(c.Snapshot)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fieldErr("Snapshot", "%s: directory %s does not exist", c.Snapshot, dir)
	}
	return nil
}
