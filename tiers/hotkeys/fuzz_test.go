package hotkeys

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzParseCount: parseCount accepts exactly what memcached's counters
// hold (decimal digits, then the spaces a shrinking decr leaves) and
// reads the number right; appendSubKey never yields a key a text client
// could send.
func FuzzParseCount(f *testing.F) {
	f.Add([]byte("0"))                     // the smallest counter
	f.Add([]byte("18446744073709551615"))  // the largest
	f.Add([]byte("18446744073709551616"))  // one past it
	f.Add([]byte("42   "))                 // after a decr from 42000
	f.Add([]byte(" 42"))                   // leading space: not a counter
	f.Add([]byte(""))                      // empty value
	f.Add([]byte("-1"))                    // negative: not a counter
	f.Add([]byte("abc"))                   // text
	f.Add([]byte("000000000000000000001")) // 21 digits
	f.Fuzz(func(t *testing.T, v []byte) {
		n, ok := parseCount(v)
		trimmed := strings.TrimRight(string(v), " ")
		want, err := strconv.ParseUint(trimmed, 10, 64)
		wantOK := err == nil && len(trimmed) > 0 && len(trimmed) <= 20 && !strings.ContainsAny(trimmed, "+-")
		if ok != wantOK || (ok && n != want) {
			t.Fatalf("parseCount(%q) = %d, %v; want %d, %v", v, n, ok, want, wantOK)
		}
		if len(v) > 0 && len(v) <= maxSplitKey {
			k := appendSubKey(nil, v, 63)
			if !strings.ContainsRune(string(k[len(v):]), subSep) {
				t.Fatalf("sub-key %q has no separator", k)
			}
		}
	})
}
