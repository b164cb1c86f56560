package hotmarks

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strata-cache/strata/tiers/hotkeys"
)

func mark(key string, since, seen int64) hotkeys.Mark {
	return hotkeys.Mark{Key: key, Kind: hotkeys.KindCounter, K: 8, Since: since, Seen: seen}
}

func TestMerge(t *testing.T) {
	older, newer := mark("k", 10, 20), mark("k", 15, 30)
	newer.K = 4
	for _, got := range []hotkeys.Mark{merge(older, newer), merge(newer, older)} {
		if want := (hotkeys.Mark{Key: "k", Kind: hotkeys.KindCounter, K: 4, Since: 10, Seen: 30}); got != want {
			t.Fatalf("merge = %+v, want %+v", got, want)
		}
	}
}

// toWrite keeps the shared copy's earlier Since, drops a mark last seen
// more than hold ago and not one seen exactly hold ago, and sorts.
func TestToWrite(t *testing.T) {
	const hold = 100
	pending := map[string]hotkeys.Mark{
		"c": mark("c", 50, 60),   // shared since 5
		"a": mark("a", 900, 900), // shared since 1000: keeps its own
		"b": mark("b", 10, 899),  // seen exactly hold ago
		"z": mark("z", 10, 898),  // cooled
	}
	have := map[string]hotkeys.Mark{"c": mark("c", 5, 5), "a": mark("a", 1000, 1000)}
	got := fmt.Sprint(toWrite(pending, have, 999, hold))
	want := fmt.Sprint([]hotkeys.Mark{mark("a", 900, 900), mark("b", 10, 899)})
	if got != want {
		t.Fatalf("toWrite = %s, want %s", got, want)
	}
	if got := len(toWrite(pending, have, 0, hold)); got != 4 {
		t.Fatalf("toWrite at an unknown time kept %d marks, want all 4", got)
	}
	pending["c"] = mark("c", 950, 990)
	got = fmt.Sprint(toWrite(pending, have, 999, hold))
	want = fmt.Sprint([]hotkeys.Mark{mark("a", 900, 900), mark("b", 10, 899), mark("c", 5, 990)})
	if got != want {
		t.Fatalf("toWrite = %s, want %s", got, want)
	}
}

func TestDecodeMark(t *testing.T) {
	good := hotkeys.Mark{Key: "votes:1", Kind: hotkeys.KindList, K: 3, Since: 7, Seen: 9}
	if got, err := decodeMark(good.Key, encodeMark(good)); err != nil || got != good {
		t.Fatalf("round trip = %+v, %v", got, err)
	}
	if got, err := decodeMark("x", []byte(`{"kind":"read","k":2,"since":1,"seen":1,"later":true}`)); err != nil || got.Kind != hotkeys.KindRead {
		t.Fatalf("a row with an unknown field: %+v, %v", got, err)
	}
	for _, c := range []struct{ key, value string }{
		{"k", `not json`},
		{"k", `{"kind":"gauge","k":2}`},
		{"k", `{"kind":"counter","k":1}`},
		{"k", `{"kind":"counter","k":65}`},
		{"k", `{"kind":"counter","k":2,"since":5,"seen":4}`},
		{"", `{"kind":"counter","k":2}`},
		{strings.Repeat("k", 251), `{"kind":"counter","k":2}`},
	} {
		if m, err := decodeMark(c.key, []byte(c.value)); err == nil {
			t.Errorf("decodeMark(%q, %s) = %+v, want an error", c.key, c.value, m)
		}
	}
}

// FuzzDecodeMark: no row value crashes the decoder, and what it accepts
// encodes back to the same mark.
func FuzzDecodeMark(f *testing.F) {
	f.Add("votes:1", []byte(`{"kind":"counter","k":8,"since":1,"seen":2}`)) // a counter mark
	f.Add("feed:9", []byte(`{"kind":"list","k":64,"since":0,"seen":0}`))    // the largest K
	f.Add("celeb", []byte(`{"kind":"read","k":2,"since":-5,"seen":3}`))     // negative times are a clock's business
	f.Add("k", []byte(`{"kind":"counter","k":8,"kind":"list"}`))            // a repeated field: the last wins
	f.Add("k", []byte(`{"kind":"counter","k":1e400}`))                      // a number out of range
	f.Add("k", []byte(`{"kind":"\u0063ounter","k":2}`))                     // an escaped kind
	f.Add("", []byte(`{}`))                                                 // nothing at all
	f.Fuzz(func(t *testing.T, key string, value []byte) {
		m, err := decodeMark(key, value)
		if err != nil {
			return
		}
		again, err := decodeMark(key, encodeMark(m))
		if err != nil || again != m {
			t.Fatalf("%q %q: decoded %+v, re-decoded %+v, %v", key, value, m, again, err)
		}
	})
}
