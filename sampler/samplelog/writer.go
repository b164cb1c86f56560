package samplelog

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// WriterConfig configures a rotating Writer.
type WriterConfig struct {
	Dir      string        // created if missing
	Prefix   string        // file name prefix; unsafe characters become '_'
	MaxBytes int64         // uncompressed bytes per file; ≤ 0 means no size limit
	MaxAge   time.Duration // age at which a file is rotated; ≤ 0 means no age limit
	Gzip     bool
	Now      func() time.Time // the clock for file names and ages; nil means time.Now
}

// PartSuffix marks a file that is still being written.
const PartSuffix = ".part"

// Writer appends entries to rotating JSON Lines files.
type Writer struct {
	cfg WriterConfig

	f        *os.File
	gz       *gzip.Writer
	bw       *bufio.Writer
	name     string // final path of the open file
	opened   time.Time
	size     int64 // uncompressed bytes written to the open file
	seq      int
	line     []byte
	finished []string // final paths of closed files, oldest first
	closed   uint64   // files closed and published
}

// NewWriter prepares a writer; the first file is created by the first Write.
func NewWriter(cfg WriterConfig) (*Writer, error) {
	if cfg.Dir == "" {
		return nil, errors.New("sample log: empty directory")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Prefix == "" {
		cfg.Prefix = "samples"
	}
	cfg.Prefix = safeName(cfg.Prefix)
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("sample log: %w", err)
	}
	return &Writer{cfg: cfg}, nil
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}

// Write appends e to the current file, rotating first if the file is too
// old or e would take it past MaxBytes.
func (w *Writer) Write(e *Entry) error {
	w.line = AppendJSON(w.line[:0], e)
	now := w.cfg.Now()
	if w.f != nil && (w.tooOld(now) || (w.cfg.MaxBytes > 0 && w.size > 0 && w.size+int64(len(w.line)) > w.cfg.MaxBytes)) {
		if err := w.closeFile(); err != nil {
			return err
		}
	}
	if w.f == nil {
		if err := w.open(now); err != nil {
			return err
		}
	}
	if _, err := w.bw.Write(w.line); err != nil {
		w.abandon()
		return fmt.Errorf("sample log %s: %w", w.name, err)
	}
	w.size += int64(len(w.line))
	return nil
}

func (w *Writer) tooOld(now time.Time) bool {
	return w.cfg.MaxAge > 0 && now.Sub(w.opened) >= w.cfg.MaxAge
}

// RotateIfOld closes the current file if it has reached MaxAge, so it is
// published under its final name even when no record comes to trigger it.
func (w *Writer) RotateIfOld() error {
	if w.f != nil && w.tooOld(w.cfg.Now()) {
		return w.closeFile()
	}
	return nil
}

// Flush pushes buffered records to the operating system (for gzip, as a
// sync flush, so a reader of the part file sees them).
func (w *Writer) Flush() error {
	if w.f == nil {
		return nil
	}
	err := w.bw.Flush()
	if err == nil && w.gz != nil {
		err = w.gz.Flush()
	}
	if err != nil {
		w.abandon()
		return fmt.Errorf("sample log %s: %w", w.name, err)
	}
	return nil
}

// Close closes and publishes the current file. The Writer can be written
// again afterwards (a new file is opened).
func (w *Writer) Close() error {
	if w.f == nil {
		return nil
	}
	return w.closeFile()
}

// maxFinished bounds the list Files returns in a long-running process.
const maxFinished = 1024

// Completed is the number of files closed and published so far.
func (w *Writer) Completed() uint64 { return w.closed }

// Files returns the final paths of the files closed so far, oldest first
// (at most the last 1024).
func (w *Writer) Files() []string { return append([]string(nil), w.finished...) }

func (w *Writer) open(now time.Time) error {
	ext := ".jsonl"
	if w.cfg.Gzip {
		ext += ".gz"
	}
	stamp := now.UTC().Format("20060102T150405.000000Z")
	for tries := 0; ; tries++ {
		w.seq++
		name := filepath.Join(w.cfg.Dir, w.cfg.Prefix+"-"+stamp+"-"+strconv.Itoa(w.seq)+ext)
		f, err := os.OpenFile(name+PartSuffix, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) && tries < 100 {
			continue
		}
		if err == nil {
			// A published file of the same name would be overwritten by
			// the rename: skip that name too.
			if _, serr := os.Stat(name); serr == nil && tries < 100 {
				f.Close()
				os.Remove(name + PartSuffix)
				continue
			}
		}
		if err != nil {
			return fmt.Errorf("sample log: %w", err)
		}
		w.f, w.name, w.opened, w.size = f, name, now, 0
		break
	}
	if w.cfg.Gzip {
		w.gz = gzip.NewWriter(w.f)
		w.bw = bufio.NewWriterSize(w.gz, 64<<10)
	} else {
		w.bw = bufio.NewWriterSize(w.f, 64<<10)
	}
	return nil
}

func (w *Writer) closeFile() error {
	err := w.bw.Flush()
	if w.gz != nil {
		if cerr := w.gz.Close(); err == nil {
			err = cerr
		}
	}
	if serr := w.f.Sync(); err == nil {
		err = serr
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(w.name+PartSuffix, w.name)
	}
	name := w.name
	if err == nil {
		if len(w.finished) == maxFinished {
			w.finished = append(w.finished[:0], w.finished[1:]...)
		}
		w.finished = append(w.finished, name)
		w.closed++
	}
	w.f, w.gz, w.bw, w.name = nil, nil, nil, ""
	if err != nil {
		return fmt.Errorf("sample log %s: %w", name, err)
	}
	return nil
}

// abandon drops a file whose writes failed; the part file stays on disk for
// inspection and the next Write opens a new one.
func (w *Writer) abandon() {
	if w.f != nil {
		w.f.Close()
	}
	w.f, w.gz, w.bw, w.name = nil, nil, nil, ""
}
