package main

import (
	"strconv"
	"strings"
)

// keyLines finds the line of every key of a TOML file. The decoder does not
// expose positions for keys it did not decode, nor for each element of an
// array of tables, so this reads the (already valid) file once more.
//
// Each entry has two spellings of its path: plain ("promotion.rule.prefix",
// as the decoder's MetaData names keys) and indexed
// ("promotion.rule[1].prefix", as error messages name them).
type keyLines struct {
	entries []keyLine
	used    map[int]bool // entries already handed out by nextOccurrence
}

type keyLine struct {
	plain, indexed string
	line           int
}

// lineOf returns the line of an indexed or plain key path, or of its
// nearest parent that has one; 0 if none does.
func (k *keyLines) lineOf(key string) int {
	for key != "" {
		for _, e := range k.entries {
			if e.indexed == key || e.plain == key {
				return e.line
			}
		}
		i := strings.LastIndexAny(key, ".[")
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0
}

// nextOccurrence returns the line and indexed path of the first occurrence
// of a plain key not yet handed out. The decoder lists an array of tables'
// keys once per element, in file order, so successive calls walk them.
func (k *keyLines) nextOccurrence(plain string) (int, string) {
	for i, e := range k.entries {
		if e.plain == plain && !k.used[i] {
			k.used[i] = true
			return e.line, e.indexed
		}
	}
	return k.lineOf(plain), plain
}

// scanKeyLines records every table header and key/value line of data.
func scanKeyLines(data []byte) *keyLines {
	k := &keyLines{used: map[int]bool{}}
	sc := lineScanner{aot: map[string]int{}}
	for i, line := range strings.Split(string(data), "\n") {
		sc.line(k, i+1, line)
	}
	return k
}

// lineScanner is the state carried from one line to the next: the table
// in force and whether a value continues (a multi-line string or array).
type lineScanner struct {
	table, tableIdx string         // current table, plain and indexed
	aot             map[string]int // array of tables (plain path) → index of its current element
	inString        string         // the closing delimiter of an open multi-line string
	depth           int            // open [ and { of a multi-line value
}

func (s *lineScanner) line(k *keyLines, n int, text string) {
	if s.inString != "" || s.depth > 0 {
		s.skipValue(text)
		return
	}
	rest := strings.TrimLeft(text, " \t")
	if rest == "" || rest[0] == '#' {
		return
	}
	if strings.HasPrefix(rest, "[[") {
		path, _ := parseKey(rest[2:])
		plain := strings.Join(path, ".")
		s.aot[plain]++
		s.table, s.tableIdx = plain, s.index(path)
		k.entries = append(k.entries, keyLine{plain: plain, indexed: s.tableIdx, line: n})
		return
	}
	if rest[0] == '[' {
		path, _ := parseKey(rest[1:])
		s.table, s.tableIdx = strings.Join(path, "."), s.index(path)
		k.entries = append(k.entries, keyLine{plain: s.table, indexed: s.tableIdx, line: n})
		return
	}
	path, after := parseKey(rest)
	if len(path) == 0 {
		return
	}
	plain, indexed := strings.Join(path, "."), strings.Join(path, ".")
	if s.table != "" {
		plain, indexed = s.table+"."+plain, s.tableIdx+"."+indexed
	}
	k.entries = append(k.entries, keyLine{plain: plain, indexed: indexed, line: n})
	if eq := strings.IndexByte(after, '='); eq >= 0 {
		s.skipValue(after[eq+1:])
	}
}

// index spells a table path with the element index of every array of
// tables on it: promotion.rule → promotion.rule[2].
func (s *lineScanner) index(path []string) string {
	var b strings.Builder
	for i, p := range path {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
		if n, ok := s.aot[strings.Join(path[:i+1], ".")]; ok && n > 0 {
			b.WriteString("[" + strconv.Itoa(n-1) + "]")
		}
	}
	return b.String()
}

// skipValue consumes a value, tracking multi-line strings and the nesting
// of arrays and inline tables across lines, up to a comment.
func (s *lineScanner) skipValue(v string) {
	for i := 0; i < len(v); {
		if s.inString != "" {
			j := strings.Index(v[i:], s.inString)
			if j < 0 {
				return
			}
			if s.inString == `"""` && j > 0 && v[i+j-1] == '\\' {
				i += j + 1
				continue
			}
			i += j + len(s.inString)
			s.inString = ""
			continue
		}
		switch c := v[i]; c {
		case '#':
			return
		case '[', '{':
			s.depth++
			i++
		case ']', '}':
			s.depth--
			i++
		case '"', '\'':
			delim := string(c)
			if strings.HasPrefix(v[i:], delim+delim+delim) {
				s.inString = delim + delim + delim
				i += 3
				continue
			}
			i = skipString(v, i)
		default:
			i++
		}
	}
}

// skipString returns the index after the one-line string starting at v[i].
func skipString(v string, i int) int {
	q := v[i]
	for j := i + 1; j < len(v); j++ {
		if q == '"' && v[j] == '\\' {
			j++
			continue
		}
		if v[j] == q {
			return j + 1
		}
	}
	return len(v)
}

// parseKey reads a dotted key (bare or quoted parts) at the start of s and
// returns its parts and what follows it.
func parseKey(s string) ([]string, string) {
	var parts []string
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return parts, s
		}
		switch s[0] {
		case '"', '\'':
			end := skipString(s, 0)
			raw := s[:end]
			part := strings.Trim(raw, string(s[0]))
			if s[0] == '"' {
				if u, err := strconv.Unquote(raw); err == nil {
					part = u
				}
			}
			parts = append(parts, part)
			s = s[end:]
		default:
			j := 0
			for j < len(s) && isBareKeyChar(s[j]) {
				j++
			}
			if j == 0 {
				return parts, s
			}
			parts = append(parts, s[:j])
			s = s[j:]
		}
		s = strings.TrimLeft(s, " \t")
		if s == "" || s[0] != '.' {
			return parts, s
		}
		s = s[1:]
	}
}

func isBareKeyChar(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
