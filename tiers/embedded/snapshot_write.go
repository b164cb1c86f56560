package embedded

import (
	"os"

	"github.com/cespare/xxhash/v2"
)

// snapWriteBlocks is how many snapBufSize blocks a save has: one the walk
// fills while the others wait for or pass through the file writer.
const snapWriteBlocks = 3

// blockWriter buffers a snapshot's body in large blocks and hands each
// full one to a goroutine that checksums it and writes it to the file, so
// the walk of the store (bound by cache misses, one item at a time) and
// the writing run on two cores. Blocks go back and forth over two
// channels; the file sees them in order.
//
// put and close are for one goroutine. After a write to the file
// fails, later blocks are dropped and close returns that first error,
// as bufio.Writer does.
type blockWriter struct {
	buf        []byte
	made       int // blocks allocated, up to snapWriteBlocks
	full, free chan []byte
	done       chan error
	d          *xxhash.Digest // read only after done delivered
	n          int64          // bytes written after the header; likewise
}

func newBlockWriter(f *os.File) *blockWriter {
	w := &blockWriter{
		full: make(chan []byte, snapWriteBlocks),
		free: make(chan []byte, snapWriteBlocks),
		done: make(chan error, 1),
		d:    xxhash.New(),
	}
	w.buf, w.made = make([]byte, 0, snapBufSize), 1
	go w.run(f)
	return w
}

// run writes the blocks. Every writebackEvery bytes it starts the disk
// on what it wrote.
func (w *blockWriter) run(f *os.File) {
	var err error
	var synced int64 // bytes handed to startWriteback
	for b := range w.full {
		if err == nil {
			_, _ = w.d.Write(b)
			var n int
			n, err = f.Write(b)
			w.n += int64(n)
			if w.n-synced >= writebackEvery {
				startWriteback(f, snapHdrLen+synced, w.n-synced)
				synced = w.n
			}
		}
		w.free <- b[:0]
	}
	w.done <- err
}

// put appends p to the body; it never fails: an error surfaces from close.
// A small store's save allocates one block: the others are made only as
// the walk outruns the writer.
func (w *blockWriter) put(p []byte) {
	for len(p) > 0 {
		c := copy(w.buf[len(w.buf):cap(w.buf)], p)
		w.buf = w.buf[:len(w.buf)+c]
		p = p[c:]
		if len(w.buf) == cap(w.buf) {
			w.full <- w.buf
			select {
			case w.buf = <-w.free:
			default:
				if w.made < snapWriteBlocks {
					w.buf = make([]byte, 0, snapBufSize)
					w.made++
				} else {
					w.buf = <-w.free
				}
			}
		}
	}
}

// close writes what is buffered and waits until the file has it all,
// returning the first write error.
func (w *blockWriter) close() error {
	if len(w.buf) > 0 {
		w.full <- w.buf
	}
	w.buf = nil
	close(w.full)
	return <-w.done
}
