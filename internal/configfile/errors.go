package configfile

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is one problem of a configuration file, printed as
// "FILE:LINE: key: message". LINE is left out when unknown, key when the
// problem is not one key's, FILE when the problem is not the file's (a
// command-line flag, whose name the caller puts in Key).
type Error struct {
	File string
	Line int
	Key  string
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteByte(':')
		if e.Line > 0 {
			b.WriteString(strconv.Itoa(e.Line))
			b.WriteByte(':')
		}
		b.WriteByte(' ')
	}
	if e.Key != "" {
		b.WriteString(Clip(e.Key))
		b.WriteString(": ")
	}
	b.WriteString(ClipWords(e.Msg))
	return b.String()
}

// Errorf builds an Error.
func Errorf(file string, line int, key, format string, args ...any) *Error {
	return &Error{File: file, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)}
}

// Errors is every problem found in one file, one per line of output. A
// configuration with any of them is meant to be rejected whole.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Sorted orders es by line, in place and stably, and returns it: the
// problems without a line (flags, the file as a whole) come last, in the
// order they were found.
func (es Errors) Sorted() Errors {
	sort.SliceStable(es, func(i, j int) bool {
		li, lj := es[i].Line, es[j].Line
		if li == 0 || lj == 0 {
			return lj == 0 && li != 0
		}
		return li < lj
	})
	return es
}

// MaxShown is how much of a key, or of one word of a message, an error
// repeats: a 1 MB value is named by its first characters.
const MaxShown = 64

// Clip cuts s to MaxShown characters, marking the cut with "…".
func Clip(s string) string {
	if utf8.RuneCountInString(s) <= MaxShown {
		return s
	}
	n := 0
	for i := range s {
		if n == MaxShown {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// ClipWords cuts each space-separated word of a message (a quoted value,
// a key the decoder repeats) to MaxShown characters.
func ClipWords(s string) string {
	if len(s) <= MaxShown {
		return s
	}
	words := strings.Split(s, " ")
	for i, w := range words {
		words[i] = Clip(w)
	}
	return strings.Join(words, " ")
}
