package tomlpos

import "strings"

// Lines maps the key paths of one TOML document to their 1-based lines.
type Lines struct {
	entries []entry      // in file order
	used    map[int]bool // entries already handed out by Next
}

type entry struct {
	plain, indexed string
	line           int
}

// Scan records every table header and key of data.
func Scan(data []byte) *Lines {
	k := &Lines{used: map[int]bool{}}
	sc := scanner{aot: map[string]int{}}
	for i, line := range strings.Split(string(data), "\n") {
		sc.line(k, i+1, line)
	}
	return k
}

// Line returns the line of a plain or indexed key path, the first
// occurrence's when the path repeats; 0 if the document has no such key.
func (k *Lines) Line(key string) int {
	for _, e := range k.entries {
		if e.indexed == key || e.plain == key {
			return e.line
		}
	}
	return 0
}

// LineOf returns the line of a plain or indexed key path or, when the key
// itself is absent (a required field left out), of its nearest enclosing
// table or array element that has one; 0 if none does.
func (k *Lines) LineOf(key string) int {
	for key != "" {
		if l := k.Line(key); l != 0 {
			return l
		}
		i := strings.LastIndexAny(key, ".[")
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0
}

// Next returns the line and indexed path of the first occurrence of a plain
// key not yet handed out. The decoder lists an array of tables' keys once
// per element, in file order, so successive calls walk the elements. Once
// every occurrence is handed out it returns LineOf(plain) and plain.
func (k *Lines) Next(plain string) (int, string) {
	for i, e := range k.entries {
		if e.plain == plain && !k.used[i] {
			k.used[i] = true
			return e.line, e.indexed
		}
	}
	return k.LineOf(plain), plain
}

func (k *Lines) add(plain, indexed string, line int) {
	k.entries = append(k.entries, entry{plain: plain, indexed: indexed, line: line})
}
