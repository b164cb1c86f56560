package tomlpos

import (
	"strconv"
	"strings"
)

// scanner is the state carried from one line to the next: the table in
// force and whether a value continues (a multi-line string or array).
type scanner struct {
	table, tableIdx string         // current table, plain and indexed
	aot             map[string]int // array of tables (plain path) → number of its elements so far
	inString        string         // the closing delimiter of an open multi-line string
	depth           int            // open [ and { of a multi-line value
}

func (s *scanner) line(k *Lines, n int, text string) {
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
		k.add(plain, s.tableIdx, n)
		return
	}
	if rest[0] == '[' {
		path, _ := parseKey(rest[1:])
		s.table, s.tableIdx = strings.Join(path, "."), s.index(path)
		k.add(s.table, s.tableIdx, n)
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
	k.add(plain, indexed, n)
	eq := strings.IndexByte(after, '=')
	if eq < 0 {
		return
	}
	value := strings.TrimLeft(after[eq+1:], " \t")
	if strings.HasPrefix(value, "{") {
		for _, inner := range inlineKeys(value) {
			k.add(plain+"."+inner, indexed+"."+inner, n)
		}
	}
	s.skipValue(value)
}

// index spells a table path with the element index of every array of
// tables on it: promotion.rule → promotion.rule[2].
func (s *scanner) index(path []string) string {
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
func (s *scanner) skipValue(v string) {
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

// inlineKeys returns the top-level keys of the inline table that starts v,
// `{ a = 1, b.c = [1, 2] }` → a, b.c. It stops at the end of the line: an
// inline table is one line in TOML 1.0.
func inlineKeys(v string) []string {
	var keys []string
	rest := v[1:] // after '{'
	for {
		path, after := parseKey(rest)
		if len(path) == 0 || !strings.HasPrefix(after, "=") {
			return keys
		}
		keys = append(keys, strings.Join(path, "."))
		rest = after[1:]
		// Skip the value to the ',' or '}' that ends it at this level.
		depth := 0
		i := 0
	value:
		for i < len(rest) {
			switch c := rest[i]; c {
			case '"', '\'':
				i = skipString(rest, i)
				continue
			case '[', '{':
				depth++
			case ']', '}':
				if depth == 0 {
					return keys
				}
				depth--
			case ',':
				if depth == 0 {
					break value
				}
			}
			i++
		}
		if i >= len(rest) {
			return keys
		}
		rest = rest[i+1:]
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
