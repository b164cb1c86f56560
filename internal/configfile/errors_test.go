package configfile

import (
	"strings"
	"testing"
)

func TestErrorSpelling(t *testing.T) {
	for _, c := range []struct {
		e    Error
		want string
	}{
		{Error{File: "f.toml", Line: 3, Key: "l1.memory", Msg: "bad"}, "f.toml:3: l1.memory: bad"},
		{Error{File: "f.toml", Key: "l1.memory", Msg: "bad"}, "f.toml: l1.memory: bad"},
		{Error{File: "f.toml", Line: 2, Msg: "bad"}, "f.toml:2: bad"},
		{Error{Key: "--listen", Msg: "bad"}, "--listen: bad"},
		{Error{Msg: "bad"}, "bad"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.e, got, c.want)
		}
	}
}

// Problems come out in line order; those without a line (flags, the file
// as a whole) last, in the order found.
func TestErrorsSorted(t *testing.T) {
	es := Errors{
		{Key: "--a", Msg: "x"}, {File: "f", Line: 9, Msg: "x"}, {File: "f", Msg: "y"},
		{File: "f", Line: 2, Msg: "x"}, {File: "f", Line: 9, Msg: "z"},
	}
	got := es.Sorted().Error()
	want := "f:2: x\nf:9: x\nf:9: z\n--a: x\nf: y"
	if got != want {
		t.Fatalf("%q, want %q", got, want)
	}
}

// A long key or value is named by its first characters in an error.
func TestClip(t *testing.T) {
	if got := Clip(strings.Repeat("é", 70)); got != strings.Repeat("é", 64)+"…" {
		t.Fatalf("Clip: %q", got)
	}
	if got := Clip(strings.Repeat("é", 64)); got != strings.Repeat("é", 64) {
		t.Fatalf("Clip at the limit: %q", got)
	}
	long := strings.Repeat("x", 100_000)
	e := &Error{File: "f", Line: 1, Key: long, Msg: `"` + long + `" is not a duration`}
	got := e.Error()
	if len(got) > 200 || !strings.Contains(got, strings.Repeat("x", 60)) || !strings.HasSuffix(got, "… is not a duration") {
		t.Fatalf("%q", got)
	}
}
