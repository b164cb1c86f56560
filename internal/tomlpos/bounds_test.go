package tomlpos

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

var testLimits = Limits{Depth: 4, KeyLen: 16, Parts: 3}

func TestCheckBounds(t *testing.T) {
	for _, c := range []struct {
		doc, limit string
		line       int
	}{
		{"a = [[1, 2], [3]]\n[b.c]\nd.e = { f = [1] }\n", "", 0},
		{"a = [[[[[1]]]]]\n", "nesting", 1},
		{"a = 1\nb = [\n [\n  [\n   [\n    [1]]]]]\n", "nesting", 6},
		{"[a.b.c.d]\n", "key parts", 1},
		{"x = 1\na.b.c.d = 1\n", "key parts", 2},
		{"t = { a.b.c.d = 1 }\n", "key parts", 1},
		{"abcdefghijklmnopq = 1\n", "key length", 1},
		{"\"abcdefghijklmnopq\" = 1\n", "key length", 1},
		// Strings and comments count for nothing; a float's dot is a value's.
		{"a = \"[[[[[[a.b.c.d.e\"\n# [[[[[[ a.b.c.d.e\nb = '''\n[[[[[[\n'''\nc = 1.5\n", "", 0},
		{"a = \"\"\"\n\\\"\"\"[[[[[\n\"\"\"\nb.c.d.e = 1\n", "key parts", 4},
	} {
		err := CheckBounds([]byte(c.doc), testLimits)
		var le *LimitError
		switch {
		case c.limit == "" && err != nil:
			t.Errorf("%q: %v", c.doc, err)
		case c.limit != "" && (!errors.As(err, &le) || le.Limit != c.limit || le.Line != c.line):
			t.Errorf("%q: %v, want %s on line %d", c.doc, err, c.limit, c.line)
		}
	}
}

// FuzzCheckBounds: the scan never panics, a refusal names a line of the
// document, and a document of more than Depth '[' in a row outside any
// string is always refused.
func FuzzCheckBounds(f *testing.F) {
	// Seeds: nested arrays, a deep header, an inline table with a dotted
	// key, strings of each kind holding brackets, a comment, an
	// unterminated string and an escaped newline.
	f.Add([]byte("a = [[1], [2]]\n"))
	f.Add([]byte("[a.b.c]\nd = 1\n"))
	f.Add([]byte("t = { a.b = [ { c = 1 } ] }\n"))
	f.Add([]byte("a = \"[[[[[\"\nb = '[[[['\nc = \"\"\"\n[[[[\n\"\"\"\nd = '''[[[['''\n"))
	f.Add([]byte("# [[[[[[[[\n"))
	f.Add([]byte("a = \"[[[[[[\n"))
	f.Add([]byte("a = \"\"\"x\\\n[[[[[[\"\"\"\n"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		err := CheckBounds(doc, testLimits)
		var le *LimitError
		if errors.As(err, &le) && (le.Line < 1 || le.Line > bytes.Count(doc, []byte("\n"))+1) {
			t.Fatalf("%q: line %d", doc, le.Line)
		}
		deep := append([]byte("a = "+strings.Repeat("[", testLimits.Depth+1)), doc...)
		if CheckBounds(deep, testLimits) == nil {
			t.Fatalf("%q passed", deep)
		}
	})
}
