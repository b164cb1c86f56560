package embedded

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cespare/xxhash/v2"
)

// A snapshot file is the store's live items, written so that a restarted
// process starts warm (memcached's -e restartable cache, done as a file):
//
//	header  40 bytes  magic "STRATASN", version u32, reserved u32,
//	                  written-at i64 (Unix s), items u64, checksum u64
//	record  40 bytes  klen u32, vlen u32, flags u32, bits u32, cas u64,
//	                  exptime i64 (absolute Unix s, 0 never), atime i64
//	        then klen key bytes and vlen value bytes
//	end     40 bytes  a record header with klen = endMark, the rest zero
//
// All integers are little-endian. The checksum is xxhash64 of everything
// after the header, so a file cut short, padded or altered anywhere after
// it fails to load; the items count in the header must equal the records
// read. Expiry is absolute wall-clock time, so a TTL keeps running while
// the process is down. Records of one shard follow its LRU from the tail,
// so a load that links each at the head rebuilds the same order.
//
// Invariant: the file at the snapshot path is always a complete snapshot
// or absent, never a partial one: it is written to a temporary file in the
// same directory, synced, and renamed over the path.
const (
	snapMagic   = "STRATASN"
	snapVersion = 1
	snapHdrLen  = 40
	snapRecLen  = 40
	// endMark is the klen of the end record; no key is that long.
	endMark = ^uint32(0)
	// snapBufSize is the buffer between the store and the file. Large
	// writes and reads keep the syscall count, not the copying, the
	// cheapest part of the work.
	snapBufSize = 4 << 20
)

// ErrSnapshot is wrapped by every reason Restore refuses a file for.
var ErrSnapshot = errors.New("unusable snapshot")

// Saved is what Save wrote.
type Saved struct {
	Items int
	Bytes int64 // the file's size
}

// Save writes the store's live items to cfg.Snapshot, replacing the file
// there only once the new one is complete and synced. It holds one shard
// lock at a time, so it is meant for a store no request reaches any more
// (after the drain): a store still taking writes yields a snapshot that is
// consistent per shard, not across shards. Expired and flushed items are
// left out; a delayed flush_all still pending is not carried over.
// With no snapshot configured it does nothing.
func (s *Store) Save() (Saved, error) {
	if s.snapshot == "" {
		return Saved{}, nil
	}
	dir, base := filepath.Split(s.snapshot)
	f, err := os.CreateTemp(dir, base+".tmp-*")
	if err != nil {
		return Saved{}, err
	}
	tmp := f.Name()
	saved, err := s.writeSnapshot(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, s.snapshot)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return Saved{}, fmt.Errorf("%s: %w", s.snapshot, err)
	}
	// The rename is durable once the directory is synced; a failure here
	// leaves a complete file at one of the two names, so it is not fatal.
	if d, err := os.Open(filepath.Clean(dir + ".")); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return saved, nil
}

// hashWriter checksums what passes through it on its way to the file: it
// sits under the bufio.Writer, so it hashes the buffer in large pieces.
// Every writebackEvery bytes it starts the disk on what it wrote.
type hashWriter struct {
	f      *os.File
	d      *xxhash.Digest
	n      int64 // bytes written after the header
	synced int64 // bytes handed to startWriteback
}

// writebackEvery is how much the kernel is left to buffer before it is
// asked to start writing.
const writebackEvery = 32 << 20

func (h *hashWriter) Write(p []byte) (int, error) {
	_, _ = h.d.Write(p)
	n, err := h.f.Write(p)
	h.n += int64(n)
	if h.n-h.synced >= writebackEvery {
		startWriteback(h.f, snapHdrLen+h.synced, h.n-h.synced)
		h.synced = h.n
	}
	return n, err
}

// writeSnapshot writes the header with the count and checksum left zero,
// streams the records, then fills the two in at their offsets.
func (s *Store) writeSnapshot(f *os.File) (Saved, error) {
	now := s.now()
	fl := s.flush.Load()
	var hdr [snapHdrLen]byte
	copy(hdr[:], snapMagic)
	binary.LittleEndian.PutUint32(hdr[8:], snapVersion)
	binary.LittleEndian.PutUint64(hdr[16:], uint64(now))
	if _, err := f.Write(hdr[:]); err != nil {
		return Saved{}, err
	}
	hw := &hashWriter{f: f, d: xxhash.New()}
	bw := bufio.NewWriterSize(hw, snapBufSize)
	// rec is reused for every record: a per-item array would escape into
	// the bufio.Writer's io.Writer and cost an allocation each.
	rec := make([]byte, snapRecLen)
	items := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for j := sh.tail; j != nilIdx; j = sh.entries[j].prev {
			e := &sh.entries[j]
			if expired(e.exptime, now) || fl.flushed(e, now) {
				continue
			}
			putRecord(rec, e)
			_, _ = bw.Write(rec)
			_, _ = bw.Write(e.data)
			items++
		}
		sh.mu.Unlock()
	}
	clear(rec)
	binary.LittleEndian.PutUint32(rec, endMark)
	_, _ = bw.Write(rec)
	// bufio.Writer keeps its first error and returns it from Flush.
	if err := bw.Flush(); err != nil {
		return Saved{}, err
	}
	binary.LittleEndian.PutUint64(hdr[24:], uint64(items))
	binary.LittleEndian.PutUint64(hdr[32:], hw.d.Sum64())
	if _, err := f.WriteAt(hdr[24:], 24); err != nil {
		return Saved{}, err
	}
	return Saved{Items: items, Bytes: snapHdrLen + hw.n}, nil
}

func putRecord(b []byte, e *entry) {
	le := binary.LittleEndian
	le.PutUint32(b[0:], e.klen)
	le.PutUint32(b[4:], uint32(len(e.data))-e.klen)
	le.PutUint32(b[8:], e.flags)
	le.PutUint32(b[12:], uint32(e.bits))
	le.PutUint64(b[16:], e.cas)
	le.PutUint64(b[24:], uint64(e.exptime))
	le.PutUint64(b[32:], uint64(e.atime))
}

// HasSnapshot reports whether the store is configured with a snapshot
// file (Config.Snapshot).
func (s *Store) HasSnapshot() bool { return s.snapshot != "" }
