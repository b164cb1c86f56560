package tomlpos

import "fmt"

// Limits bound what CheckBounds lets through to a TOML decoder. The
// decoder's time and memory grow faster than linearly with the nesting
// of arrays and inline tables and with the length of a dotted key (1 MB
// of '[' or an 80 KB table header cost it seconds and a gigabyte), so a
// caller checks them first, in time linear in the document.
type Limits struct {
	Depth  int // open '[' and '{' at once, a table header's included
	KeyLen int // bytes of one key or header path, quotes and dots included
	Parts  int // dot-separated parts of one key or header path
}

// LimitError is CheckBounds' refusal: which limit, and on which line.
type LimitError struct {
	Line  int
	Limit string // "nesting", "key length" or "key parts"
	Max   int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("line %d: %s over the limit of %d", e.Line, e.Limit, e.Max)
}

// CheckBounds reads data once, as TOML's lexer would, and refuses it at
// the first place where it exceeds l. It does not judge anything else:
// an invalid document within the limits passes, for the decoder to
// report. Strings and comments are skipped, so a bracket or a dot in
// them counts for nothing.
func CheckBounds(data []byte, l Limits) error {
	var (
		line           = 1
		stack          []byte // open '[' and '{'
		inKey          bool   // reading a key or a header path
		keyStart       int
		parts          int
		lineStart      = true // at the start of a top-level line
		afterInlineKey bool   // inside '{', the next non-space starts a key
	)
	startKey := func(i int) {
		inKey, keyStart, parts = true, i, 1
	}
	over := func(limit string, max int) error { return &LimitError{Line: line, Limit: limit, Max: max} }
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inKey && i-keyStart > l.KeyLen {
			return over("key length", l.KeyLen)
		}
		switch c {
		case '\n':
			line++
			inKey = false
			if len(stack) == 0 {
				lineStart = true
			}
			continue
		case ' ', '\t', '\r':
			continue
		case '#':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			i--
			continue
		case '"', '\'':
			if !inKey && (lineStart || afterInlineKey) {
				startKey(i)
				lineStart, afterInlineKey = false, false
			}
			end, lines := stringEnd(data, i)
			line += lines
			i = end - 1
			continue
		}
		if lineStart {
			lineStart = false
			if c == '[' {
				stack = append(stack, '[')
				if i+1 < len(data) && data[i+1] == '[' {
					i++
					stack = append(stack, '[')
				}
				if len(stack) > l.Depth {
					return over("nesting", l.Depth)
				}
				startKey(i + 1)
				continue
			}
			startKey(i)
		}
		if afterInlineKey && c != '}' {
			afterInlineKey = false
			startKey(i)
		}
		switch c {
		case '.':
			if inKey {
				parts++
				if parts > l.Parts {
					return over("key parts", l.Parts)
				}
			}
		case '=':
			inKey = false
		case '[', '{':
			inKey = false
			stack = append(stack, c)
			if len(stack) > l.Depth {
				return over("nesting", l.Depth)
			}
			afterInlineKey = c == '{'
		case ']', '}':
			inKey = false
			if n := len(stack); n > 0 {
				stack = stack[:n-1]
			}
		case ',':
			afterInlineKey = len(stack) > 0 && stack[len(stack)-1] == '{'
		}
	}
	return nil
}

// stringEnd returns the index just past the string that starts at
// data[i] (basic or literal, one line or multi-line) and the newlines it
// holds. An unterminated string runs to the end.
func stringEnd(data []byte, i int) (end, lines int) {
	q := data[i]
	multi := i+2 < len(data) && data[i+1] == q && data[i+2] == q
	j := i + 1
	if multi {
		j = i + 3
	}
	for ; j < len(data); j++ {
		switch c := data[j]; {
		case c == '\\' && q == '"':
			if j+1 < len(data) && data[j+1] == '\n' {
				lines++
			}
			j++
		case c == '\n':
			lines++
			if !multi {
				return j, lines - 1 // the newline is the caller's
			}
		case c == q && !multi:
			return j + 1, lines
		case c == q && j+2 < len(data) && data[j+1] == q && data[j+2] == q:
			// A closing """ may be followed by up to two more quotes
			// that belong to the string.
			k := j + 3
			for k < len(data) && data[k] == q && k < j+5 {
				k++
			}
			return k, lines
		}
	}
	return len(data), lines
}
