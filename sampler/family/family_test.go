package family

import (
	"strings"
	"testing"
)

func TestDefaultNormalisation(t *testing.T) {
	for _, c := range []struct{ key, want string }{
		{"photos:foobar:12345:c1", "photos:foobar:{N}:c{N}"},
		{"photos:foobar:678:c22", "photos:foobar:{N}:c{N}"},
		{"user:42", "user:{N}"},
		{"user:12345678901", "user:{N}"}, // long numbers stay {N}
		{"profile", "profile"},           // a plain word is not mangled
		{"deadbeef:facade", "deadbeef:facade"},
		{"feed.timeline.abcdef", "feed.timeline.abcdef"},
		{"sess:9f86d081884c7d65", "sess:{H}"},
		{"sess_9F86D081884C7D65", "sess_{H}"},
		{"obj:1a2b3c4d:v3", "obj:{H}:v{N}"},            // exactly 8 hex chars
		{"obj:1a2b3c4:v3", "obj:{N}a{N}b{N}c{N}:v{N}"}, // 7: too short for {H}
		{"doc:123e4567-e89b-12d3-a456-426614174000:body", "doc:{H}:body"},
		{"doc:123e4567-e89b-12d3-a456-426614174000", "doc:{H}"},
		{"doc:123e4567-e89b-12d3-a456-426614174000x", "doc:{H}-e{N}b-{N}d{N}-a{N}-{N}x"}, // glued to a letter: not a UUID; the last word is not hex-only
		{"v2beta", "v{N}beta"},
		{"photoabcdef12", "photoabcdef{N}"}, // hex tail inside a longer word is not a hash
		{"", ""},
		{"::", "::"},
		{"caf\xc3\xa9:7", "caf\xc3\xa9:{N}"},
	} {
		if got := string(AppendDefault(nil, []byte(c.key))); got != c.want {
			t.Errorf("AppendDefault(%q) = %q, want %q", c.key, got, c.want)
		}
	}
}

func TestRulesApplyFirst(t *testing.T) {
	n, err := New([]Rule{
		{Match: `^tl:(\w+):`, Family: "timeline:$1"},
		{Match: `^cfg:`, Family: "config"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ key, want string }{
		{"tl:home:123", "timeline:home"},
		{"cfg:99:x", "config"},
		{"other:5", "other:{N}"},
	} {
		if got := n.Family([]byte(c.key)); got != c.want {
			t.Errorf("Family(%q) = %q, want %q", c.key, got, c.want)
		}
	}
}

func TestBadRules(t *testing.T) {
	if _, err := New([]Rule{{Match: "(", Family: "x"}}); err == nil || !strings.Contains(err.Error(), "rule 0") {
		t.Fatalf("bad pattern: %v", err)
	}
	if _, err := New([]Rule{{Match: "x"}}); err == nil {
		t.Fatal("empty family accepted")
	}
}

func FuzzDefaultIdempotentShape(f *testing.F) {
	f.Add("photos:foobar:12345:c1")                        // the paper's example
	f.Add("doc:123e4567-e89b-12d3-a456-426614174000:body") // a UUID
	f.Add("sess:9f86d081884c7d65")                         // a hex hash
	f.Fuzz(func(t *testing.T, key string) {
		out := AppendDefault(nil, []byte(key))
		// Placeholders only ever replace word bytes: the non-word skeleton
		// of the key (outside placeholders) is preserved.
		strip := func(s string) string {
			s = strings.ReplaceAll(s, placeholderN, "")
			s = strings.ReplaceAll(s, placeholderH, "")
			var b strings.Builder
			for i := 0; i < len(s); i++ {
				if !isWord(s[i]) && s[i] != '-' {
					b.WriteByte(s[i])
				}
			}
			return b.String()
		}
		if strip(string(out)) != strip(key) && !strings.ContainsAny(key, "{}") {
			t.Fatalf("skeleton changed: %q -> %q", key, out)
		}
		// No digit survives outside a placeholder.
		rest := strings.ReplaceAll(strings.ReplaceAll(string(out), placeholderN, ""), placeholderH, "")
		if strings.ContainsAny(rest, "0123456789") {
			t.Fatalf("digit left in %q -> %q", key, out)
		}
	})
}
