package samplelog

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxLineBytes bounds one record line; a longer line is skipped and
// reported.
const MaxLineBytes = 1 << 20

// LineError describes a line that Scan skipped. Its text is FILE:LINE: reason.
type LineError struct {
	File string
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// ErrTruncated is wrapped by the LineError of a file that ends in the middle
// of a record or of its gzip stream.
var ErrTruncated = errors.New("truncated")

// ScanFile opens path and scans it (see Scan). The returned error is only
// for a file that cannot be opened.
func ScanFile(path string, fn func(*Entry), bad func(*LineError)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("sample log: %w", err)
	}
	defer f.Close()
	Scan(f, path, fn, bad)
	return nil
}

// Scan reads records from r, plain or gzip (recognised by its magic bytes,
// not its name), calling fn for every well-formed record and bad for every
// line it skips. Blank lines are ignored. A read error, such as a gzip
// stream cut short, is reported once, at the line it interrupted, and ends
// the scan: what was read before it still counts. The *Entry passed to fn is
// reused for the next record.
func Scan(r io.Reader, name string, fn func(*Entry), bad func(*LineError)) {
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			bad(&LineError{File: name, Line: 1, Err: fmt.Errorf("gzip: %w", err)})
			return
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 64<<10)
	}
	var (
		e        Entry
		long     []byte // the line so far when it spans more than the buffer
		partial  bool   // long holds the start of the current line
		overflow bool   // the current line exceeded MaxLineBytes
		lineNo   int
	)
	for {
		chunk, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			partial = true
			if !overflow {
				long = append(long, chunk...)
				overflow = len(long) > MaxLineBytes
			}
			continue
		}
		if !partial && len(chunk) == 0 && err != nil {
			if err != io.EOF {
				bad(&LineError{File: name, Line: lineNo + 1, Err: fmt.Errorf("%w: %v", ErrTruncated, err)})
			}
			return
		}
		lineNo++
		line := chunk
		if partial {
			if !overflow {
				long = append(long, chunk...)
				overflow = len(long) > MaxLineBytes
			}
			line = long
		}
		complete := len(chunk) > 0 && chunk[len(chunk)-1] == '\n'
		switch {
		case err != nil && err != io.EOF:
			// The stream broke inside this line.
			bad(&LineError{File: name, Line: lineNo, Err: fmt.Errorf("%w: %v", ErrTruncated, err)})
			return
		case overflow:
			bad(&LineError{File: name, Line: lineNo, Err: fmt.Errorf("%w: line longer than %d bytes", ErrMalformed, MaxLineBytes)})
		default:
			line = bytes.TrimRight(line, "\r\n")
			if len(bytes.TrimSpace(line)) == 0 {
				break
			}
			if perr := ParseLine(line, &e); perr != nil {
				if !complete {
					perr = fmt.Errorf("%w: no newline at end of file: %w", ErrTruncated, perr)
				}
				bad(&LineError{File: name, Line: lineNo, Err: perr})
				break
			}
			fn(&e)
		}
		partial, overflow, long = false, false, long[:0]
		if err != nil {
			return
		}
	}
}
