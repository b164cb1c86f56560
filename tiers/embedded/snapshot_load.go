package embedded

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/cespare/xxhash/v2"
)

// Restored is what Restore found.
type Restored struct {
	Items   int   // items linked
	Expired int   // items whose expiry passed while the process was down
	Skipped int   // items larger than this store's MaxItemSize or shards allow
	Bytes   int64 // the file's size
	// Missing is set when there was no file: the store starts empty.
	Missing bool
	// MovedTo is where a refused file was moved aside, "" otherwise.
	MovedTo string
}

// Restore loads cfg.Snapshot into the store, which must be new and not
// yet serving, and removes the file: it describes the store only until the
// store takes its first write, so a process that later dies without a
// clean Save must not bring it back. The store's CAS counter is moved past
// every CAS loaded, so the next write's CAS is new. Items that expired
// while the process was down are dropped; if the file holds more than
// MaxBytes, the least recently used are evicted as the rest arrive.
//
// A missing file is no error (Restored.Missing). A file that cannot be
// used (cut short, corrupt, another format or version) leaves the store
// empty, never partly loaded, and is renamed to FILE.bad-<UTC time> so the
// next Save cannot overwrite the evidence; the error reads "FILE: reason"
// and wraps ErrSnapshot. While it loads the collector runs only near the
// memory limit (relaxCollector). With no snapshot configured Restore does
// nothing.
func (s *Store) Restore() (Restored, error) {
	if s.snapshot == "" {
		return Restored{}, nil
	}
	if s.Len() != 0 {
		return Restored{}, fmt.Errorf("%s: restore into a store that already holds items", s.snapshot)
	}
	f, err := os.Open(s.snapshot)
	if errors.Is(err, fs.ErrNotExist) {
		return Restored{Missing: true}, nil
	}
	if err != nil {
		return Restored{}, err // already names the file
	}
	restore := relaxCollector()
	r, err := s.load(f)
	restore()
	_ = f.Close()
	if err != nil {
		s.reset()
		bad := s.snapshot + ".bad-" + time.Unix(s.now(), 0).UTC().Format("20060102T150405Z")
		if rerr := os.Rename(s.snapshot, bad); rerr != nil {
			return Restored{}, fmt.Errorf("%s: %w (and it could not be moved aside: %v)", s.snapshot, err, rerr)
		}
		return Restored{MovedTo: bad}, fmt.Errorf("%s: %w (moved aside to %s)", s.snapshot, err, bad)
	}
	if err := os.Remove(s.snapshot); err != nil {
		return r, fmt.Errorf("%s: loaded, but could not be removed: %w", s.snapshot, err)
	}
	return r, nil
}

// reset empties the store, as New left it: a failed load must leave no
// item behind.
func (s *Store) reset() {
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		sh.entries, sh.bytes, sh.items, sh.c = nil, 0, 0, counters{}
		sh.init(sh.budget)
		sh.mu.Unlock()
	}
	s.cas.Store(0)
}

// hashReader checksums what bufio.Reader pulls from the file, in the
// reader's large pieces. The caller reads to EOF, so the sum covers the
// whole body whatever the buffer size.
type hashReader struct {
	r io.Reader
	d *xxhash.Digest
	n int64
}

func (h *hashReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	_, _ = h.d.Write(p[:n])
	h.n += int64(n)
	return n, err
}

func snapErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrSnapshot}, args...)...)
}

// loadBatch is how many items the reader hands the linker at a time, and
// loadBatches how many batches are in flight: enough for either side to
// run on while the other waits, few enough to stay in cache.
const (
	loadBatch   = 1024
	loadBatches = 4
)

// loadedItem is one record read, waiting to be linked.
type loadedItem struct {
	data           []byte
	h              uint64 // the key's hash, taken while the key is in cache
	klen           int
	flags          uint32
	bits           uint8
	cas            uint64
	exptime, atime int64
}

// linker links loaded items in a goroutine of its own, in the order read,
// so that reading, checksumming and copying the file and linking the
// items into the shards run on two cores. Batches go back and forth over
// two channels, so a load allocates nothing per batch.
type linker struct {
	full, free chan []loadedItem
	done       chan [2]int // items linked, items skipped
}

// startLinker starts the linker with batches sized for n items (a
// header's count, so a small file costs a small load), at most loadBatch.
func (s *Store) startLinker(n uint64, now int64) *linker {
	l := &linker{
		full: make(chan []loadedItem, loadBatches),
		free: make(chan []loadedItem, loadBatches),
		done: make(chan [2]int, 1),
	}
	for range loadBatches {
		l.free <- make([]loadedItem, 0, min(n, loadBatch))
	}
	go func() {
		var n [2]int
		for b := range l.full {
			for i := range b {
				it := &b[i]
				if s.restoreItem(it.data, it.h, it.klen, it.flags, it.bits, it.cas, it.exptime, it.atime, now) {
					n[0]++
				} else {
					n[1]++
				}
			}
			clear(b) // the store holds the data now, not the batch
			l.free <- b[:0]
		}
		l.done <- n
	}()
	return l
}

// stop hands over the last batch, waits until every item is linked and
// returns the counts.
func (l *linker) stop(last []loadedItem) (linked, skipped int) {
	if len(last) > 0 {
		l.full <- last
	}
	close(l.full)
	n := <-l.done
	return n[0], n[1]
}

// load links the items of a snapshot read from r. On error the caller
// must reset the store: items read before the fault are linked.
func (s *Store) load(r io.Reader) (res Restored, err error) {
	le := binary.LittleEndian
	var hdr [snapHdrLen]byte
	if n, err := io.ReadFull(r, hdr[:]); err != nil {
		switch m := min(n, len(snapMagic)); {
		case n == 0:
			return res, snapErr("empty file")
		case string(hdr[:m]) != snapMagic[:m]:
			return res, snapErr("not a strata snapshot")
		default:
			return res, snapErr("header cut short at %d bytes", n)
		}
	}
	if string(hdr[:len(snapMagic)]) != snapMagic {
		return res, snapErr("not a strata snapshot")
	}
	if v := le.Uint32(hdr[8:]); v != snapVersion {
		return res, snapErr("format version %d, this strata reads version %d", v, snapVersion)
	}
	wantItems, wantSum := le.Uint64(hdr[24:]), le.Uint64(hdr[32:])

	s.reserve(wantItems)
	hr := &hashReader{r: r, d: xxhash.New()}
	br := bufio.NewReaderSize(hr, snapBufSize)
	now := s.now()
	var rec [snapRecLen]byte
	var maxCAS uint64
	records := uint64(0)
	lk := s.startLinker(wantItems, now)
	batch := <-lk.free
	// Every return waits for the linker, so the store is not written
	// after load returns, on success or before the caller's reset.
	defer func() {
		linked, skipped := lk.stop(batch)
		res.Items += linked
		res.Skipped += skipped
	}()
	off := int64(snapHdrLen)
	for {
		if _, err := io.ReadFull(br, rec[:]); err != nil {
			return res, snapErr("cut short at byte %d, in record %d", off, records)
		}
		off += snapRecLen
		klen, vlen := le.Uint32(rec[0:]), le.Uint32(rec[4:])
		if klen == endMark {
			break
		}
		records++
		flags, bits, cas := le.Uint32(rec[8:]), le.Uint32(rec[12:]), le.Uint64(rec[16:])
		exptime, atime := int64(le.Uint64(rec[24:])), int64(le.Uint64(rec[32:]))
		if klen == 0 || bits > 0xff {
			return res, snapErr("record %d at byte %d is malformed", records, off-snapRecLen)
		}
		n := int(klen) + int(vlen)
		if uint64(klen)+uint64(vlen) > uint64(s.maxItem) || itemTotal(int(klen), flags, int(vlen)) > s.maxItem {
			// Too large for this store's limits, or a corrupt length:
			// either way nothing is allocated for it.
			d, err := br.Discard(n)
			off += int64(d)
			if err != nil {
				return res, snapErr("cut short at byte %d, in record %d", off, records)
			}
			res.Skipped++
			continue
		}
		data := make([]byte, n)
		if _, err := io.ReadFull(br, data); err != nil {
			return res, snapErr("cut short in record %d", records)
		}
		off += int64(n)
		maxCAS = max(maxCAS, cas)
		if expired(exptime, now) {
			res.Expired++
			continue
		}
		batch = append(batch, loadedItem{data, xxhash.Sum64(data[:klen]), int(klen), flags, uint8(bits), cas, exptime, min(atime, now)})
		if len(batch) == loadBatch {
			lk.full <- batch
			batch = <-lk.free
		}
	}
	if rec != [snapRecLen]byte{0: 0xff, 1: 0xff, 2: 0xff, 3: 0xff} {
		return res, snapErr("end record at byte %d is malformed", off-snapRecLen)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return res, snapErr("bytes follow the end record at byte %d", off)
	}
	if sum := hr.d.Sum64(); sum != wantSum {
		return res, snapErr("checksum %016x, header says %016x", sum, wantSum)
	}
	if records != wantItems {
		return res, snapErr("%d records, header says %d", records, wantItems)
	}
	// The CAS counter is the one store field the linker does not write.
	if maxCAS > s.cas.Load() {
		s.cas.Store(maxCAS)
	}
	res.Bytes = snapHdrLen + hr.n
	return res, nil
}

// restoreItem links a loaded item at the head of its shard's LRU, as the
// most recent: records arrive from each LRU's tail. A key met twice (no
// file Save writes has one) keeps its later record. It reports false for
// an item larger than a shard, which a smaller MaxBytes can make.
func (s *Store) restoreItem(data []byte, h uint64, klen int, flags uint32, bits uint8, cas uint64, exptime, atime, now int64) bool {
	sh := s.shardFor(h)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if i := sh.lookupLocked(data[:klen], h, now, nil); i != nilIdx {
		sh.unlinkLocked(i)
	}
	if !sh.makeRoomLocked(int64(len(data))+ItemOverhead, now, nil) {
		return false
	}
	sh.insertLocked(data, klen, h, flags, exptime, atime, cas, bits)
	return true
}

// reserve sizes every shard's entries and index for n items spread evenly,
// so a load does not copy them over and over as they grow. n comes from a
// header not yet checked, so it is capped by what a shard's budget can
// hold.
func (s *Store) reserve(n uint64) {
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		per := min(n/uint64(len(s.shards))*9/8+16, uint64(sh.budget/ItemOverhead))
		if uint64(cap(sh.entries)) < per {
			sh.entries = append(make([]entry, 0, per), sh.entries...)
		}
		slots := uint64(len(sh.index.slots))
		for slots*growNum < per*growDen {
			slots *= 2
		}
		if slots > uint64(len(sh.index.slots)) {
			sh.index.resize(int(slots))
		}
		sh.mu.Unlock()
	}
}
