package workload

import (
	"strconv"
	"strings"
)

// keyLines maps the dotted path of every key in a TOML document to the
// 1-based line that defines it. The TOML decoder reports which keys it did
// not use but not where they are, so profiles find the lines themselves.
//
// Paths are recorded twice: plainly ("family.value_size.dist", first
// occurrence wins, matching the decoder's key names) and with the index of
// each array-of-tables element ("family[1].value_size.dist"), so validation
// errors for the second family point at the second family. Inline tables
// (`ttl = { dist = "fixed", value = 60 }`) contribute their inner keys on the
// line that holds them. The scan handles the subset of TOML that profiles
// use; on anything it does not understand it records nothing, and the error
// is reported without a line.
func keyLines(src string) map[string]int {
	lines := map[string]int{}
	arrayIndex := map[string]int{} // plain path of an array of tables → last index seen
	var table, indexed []string    // current table header, plain and indexed
	record := func(plain, idx []string, line int) {
		p := strings.Join(plain, ".")
		if _, ok := lines[p]; !ok {
			lines[p] = line
		}
		q := strings.Join(idx, ".")
		if _, ok := lines[q]; !ok {
			lines[q] = line
		}
	}
	for n, raw := range strings.Split(src, "\n") {
		line := strings.TrimSpace(stripComment(raw))
		if line == "" {
			continue
		}
		switch {
		case strings.HasPrefix(line, "[["):
			name := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(line, "[["), "]]"))
			table = splitKey(name)
			path := strings.Join(table, ".")
			i, seen := arrayIndex[path]
			if seen {
				i++
			}
			arrayIndex[path] = i
			indexed = append(indexedPrefix(table[:len(table)-1], arrayIndex), table[len(table)-1]+"["+strconv.Itoa(i)+"]")
			record(table, indexed, n+1)
		case strings.HasPrefix(line, "["):
			name := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(line, "["), "]"))
			table = splitKey(name)
			indexed = indexedPrefix(table, arrayIndex)
			record(table, indexed, n+1)
		default:
			eq := strings.IndexByte(line, '=')
			if eq <= 0 {
				continue
			}
			key := splitKey(line[:eq])
			plain := append(append([]string{}, table...), key...)
			idx := append(append([]string{}, indexed...), key...)
			record(plain, idx, n+1)
			value := strings.TrimSpace(line[eq+1:])
			if strings.HasPrefix(value, "{") {
				for _, inner := range inlineKeys(value) {
					record(append(append([]string{}, plain...), inner),
						append(append([]string{}, idx...), inner), n+1)
				}
			}
		}
	}
	return lines
}

// indexedPrefix adds the current array index to each prefix of path that is
// an array of tables.
func indexedPrefix(path []string, arrayIndex map[string]int) []string {
	out := make([]string, len(path))
	for i, part := range path {
		out[i] = part
		if idx, ok := arrayIndex[strings.Join(path[:i+1], ".")]; ok {
			out[i] = part + "[" + strconv.Itoa(idx) + "]"
		}
	}
	return out
}

// splitKey splits a dotted key, trimming blanks and quotes.
func splitKey(k string) []string {
	parts := strings.Split(k, ".")
	for i, p := range parts {
		parts[i] = strings.Trim(strings.TrimSpace(p), `"'`)
	}
	return parts
}

// inlineKeys returns the top-level keys of an inline table `{ a = 1, b = [1, 2] }`.
func inlineKeys(v string) []string {
	var keys []string
	depth, start := 0, 1
	inString := byte(0)
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case inString != 0:
			if c == inString {
				inString = 0
			}
		case c == '"' || c == '\'':
			inString = c
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		case c == '=' && depth == 1:
			keys = append(keys, strings.Join(splitKey(v[start:i]), "."))
		case c == ',' && depth == 1:
			start = i + 1
		}
	}
	return keys
}

// stripComment cuts a # comment that is not inside a string.
func stripComment(s string) string {
	inString := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString != 0:
			if c == '\\' && inString == '"' {
				i++
			} else if c == inString {
				inString = 0
			}
		case c == '"' || c == '\'':
			inString = c
		case c == '#':
			return s[:i]
		}
	}
	return s
}
