package tomlpos

import "testing"

const doc = `top = 1
[a]
x = """
not = a key
"""
y = [
  1,
  { z = 2 },
]
"quoted.key" = 3
b.c = 4   # dotted
[[r]]
k = 1
[[r]]
k = 2
[r.sub]
m = '''
[fake]
'''
n = "]"
t = { dist = "fixed", "v.w" = [1, { q = 2 }], s = "a,b}" }  # inline
`

func TestLineOf(t *testing.T) {
	kl := Scan([]byte(doc))
	for key, want := range map[string]int{
		"top": 1, "a": 2, "a.x": 3, "a.y": 6, "a.quoted.key": 10, "a.b.c": 11,
		"r[0].k": 13, "r[1].k": 15, "r[1].sub": 16, "r[1].sub.m": 17, "r[1].sub.n": 20,
		"r.k":             13,                                        // plain: the first occurrence
		"a.y.z":           6,                                         // inside a multi-line value: its parent's line
		"r[1].sub.t.dist": 21, "r.sub.t.v.w": 21, "r[1].sub.t.s": 21, // inline table keys
		"r[1].missing": 14, // a field left out: its array element's line
	} {
		if got := kl.LineOf(key); got != want {
			t.Errorf("LineOf(%q) = %d, want %d", key, got, want)
		}
	}
	if kl.LineOf("not") != 0 || kl.LineOf("fake") != 0 {
		t.Error("a key inside a multi-line string was recorded")
	}
	if kl.Line("a.y.z") != 0 || kl.Line("r[1].sub.t.q") != 0 {
		t.Error("Line fell back to a parent, or recorded a nested inline key")
	}
}

func TestNextWalksArrayElements(t *testing.T) {
	kl := Scan([]byte(doc))
	if l, k := kl.Next("r.k"); l != 13 || k != "r[0].k" {
		t.Errorf("first r.k: %d %s", l, k)
	}
	if l, k := kl.Next("r.k"); l != 15 || k != "r[1].k" {
		t.Errorf("second r.k: %d %s", l, k)
	}
	if l, k := kl.Next("r.k"); l != 13 || k != "r.k" {
		t.Errorf("past the last r.k: %d %s, want the first line and the plain path", l, k)
	}
}

// Nested arrays of tables index every level.
func TestNestedArrayOfTables(t *testing.T) {
	kl := Scan([]byte("[[f]]\nname = \"a\"\n[[f]]\nname = \"b\"\n[f.size]\ndist = \"fixed\"\n[[f.tag]]\nv = 1\n[[f.tag]]\nv = 2\n"))
	for key, want := range map[string]int{
		"f[0].name": 2, "f[1].name": 4, "f[1].size.dist": 6, "f[1].tag[0].v": 8, "f[1].tag[1].v": 10,
	} {
		if got := kl.Line(key); got != want {
			t.Errorf("Line(%q) = %d, want %d", key, got, want)
		}
	}
}
