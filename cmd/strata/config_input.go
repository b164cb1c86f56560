package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/strata-cache/strata/internal/tomlpos"
)

// maxConfigBytes bounds a configuration file. The default file is about
// 10 KB and a large fleet's a few tens: a file over 1 MiB is a mistake
// (a wrong path, a log, a generator run away), and refusing it before
// decoding keeps a SIGHUP from costing the running strata its memory.
const maxConfigBytes = 1 << 20

// configBounds are checked by a linear pre-scan before the TOML decoder
// runs, whose cost grows faster than linearly with nesting and with the
// length of a dotted key. No key of the schema has more than four parts
// or needs more than three levels of brackets.
var configBounds = tomlpos.Limits{Depth: 32, KeyLen: 256, Parts: 16}

// errEmptyConfig refuses a file that sets nothing.
var errEmptyConfig = errors.New("the file sets no key (empty, or only comments and blank lines); " +
	"run without --config for the defaults")

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

// checkConfigInput applies the rules a file must meet before it is
// decoded: it sets at least one key, and stays within configBounds.
//
// A file that sets nothing is refused wherever it is read. On SIGHUP it
// is far more likely a file caught half written (an editor or a deploy
// tool truncates it first) than a wish for the defaults, and taking it
// at its word would reset every live setting, a token set through the
// file included; `config check` and the start refuse it too, so that
// what they accept a SIGHUP accepts.
func checkConfigInput(path string, data []byte) *configError {
	if setsNothing(data) {
		return &configError{File: path, Msg: errEmptyConfig.Error()}
	}
	if err := tomlpos.CheckBounds(data, configBounds); err != nil {
		var le *tomlpos.LimitError
		if errors.As(err, &le) {
			return &configError{File: path, Line: le.Line, Msg: fmt.Sprintf("%s over the limit of %d for a configuration file", le.Limit, le.Max)}
		}
		return &configError{File: path, Msg: err.Error()}
	}
	return nil
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

// maxShown is how much of a key, or of one word of a message, an error
// repeats: a 1 MB value is named by its first characters.
const maxShown = 64

// clipKey cuts a key to maxShown characters, marking the cut with "…".
func clipKey(s string) string {
	if utf8.RuneCountInString(s) <= maxShown {
		return s
	}
	n := 0
	for i := range s {
		if n == maxShown {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// clipMsg cuts each space-separated word of a message (a quoted value,
// a key the decoder repeats) to maxShown characters.
func clipMsg(s string) string {
	if len(s) <= maxShown {
		return s
	}
	words := strings.Split(s, " ")
	for i, w := range words {
		words[i] = clipKey(w)
	}
	return strings.Join(words, " ")
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
