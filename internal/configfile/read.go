package configfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/strata-cache/strata/internal/tomlpos"
)

// Limits are the rules a file must meet before the TOML decoder sees it.
type Limits struct {
	// Bytes bounds the file's size: a larger one is refused after
	// reading Bytes+1 of it, so a wrong path cannot cost the reader its
	// memory.
	Bytes int64
	// Bounds are checked by tomlpos.CheckBounds, a linear pre-scan: the
	// decoder's cost grows faster than linearly with nesting and with
	// the length of a dotted key.
	Bounds tomlpos.Limits
	// EmptyHint ends the refusal of a file that sets no key: what to do
	// instead ("run without --config for the defaults").
	EmptyHint string
}

// ErrEmpty is why a file that sets no key is refused.
var ErrEmpty = errors.New("the file sets no key (empty, or only comments and blank lines)")

// Read reads the file at path within l. A file over l.Bytes, or one that
// cannot be read, is a plain error; a file that sets no key (only blank
// lines and comments) or that is past l.Bounds is an *Error naming the
// file and, where there is one, the line.
//
// An empty file is refused because a reader that takes it for "the
// defaults" would, on a reload, take a file caught half written (an
// editor or a deploy tool truncates it first) for a wish to reset
// everything.
func Read(path string, l Limits) ([]byte, error) {
	data, err := readBounded(path, l.Bytes)
	if err != nil {
		return nil, err
	}
	if setsNothing(data) {
		msg := ErrEmpty.Error()
		if l.EmptyHint != "" {
			msg += "; " + l.EmptyHint
		}
		return nil, &Error{File: path, Msg: msg}
	}
	if err := tomlpos.CheckBounds(data, l.Bounds); err != nil {
		var le *tomlpos.LimitError
		if errors.As(err, &le) {
			return nil, &Error{File: path, Line: le.Line, Msg: fmt.Sprintf("%s over the limit of %d for a configuration file", le.Limit, le.Max)}
		}
		return nil, &Error{File: path, Msg: err.Error()}
	}
	return data, nil
}

// readBounded reads path, refusing a file over limit bytes without
// reading more than limit+1 of them.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: over the limit of %d bytes for a configuration file", path, limit)
	}
	return data, nil
}

// setsNothing reports whether data holds only blank lines and comments.
func setsNothing(data []byte) bool {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] != '#' {
			return false
		}
	}
	return true
}
