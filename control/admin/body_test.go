package admin

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A string that is not UTF-8 is refused naming its field, before
// anything is stored: encoding/json would have stored U+FFFD.
func TestBodyInvalidUTF8NamesTheField(t *testing.T) {
	st := newState()
	s := startServer(t, Config{}, st)
	for _, c := range []struct{ body, field string }{
		{"{\"rules\":[{\"prefix\":\"user:\xff\",\"threshold\":4}]}", "rules.prefix"},
		{"{\"l1_max_ttl\":\"6\xc0s\"}", "l1_max_ttl"},
		{"{\"threshold\":4,\"rules\":[{\"threshold\":2,\"prefix\":\"a\"},{\"prefix\":\"\xed\xa0\x80\"}]}", "rules.prefix"},
		{"{\"l1_\xffmax\":\"6s\"}", "l1_\ufffdmax"},
	} {
		r := do(t, s, "PUT", "/admin/v1/promotion", "", c.body)
		if r.code != 400 {
			t.Fatalf("%q: %d %s, want 400", c.body, r.code, r.body)
		}
		if m := r.json(t); m["field"] != c.field || !strings.Contains(m["error"].(string), "UTF-8") {
			t.Errorf("%q: %s, want field %q", c.body, r.body, c.field)
		}
	}
	if p := st.Promotion(); len(p.Rules) != 0 {
		t.Fatalf("stored after a refusal: %+v", p)
	}
	// Escapes are not bytes: a \ufffd the client wrote is its own.
	if r := do(t, s, "PUT", "/admin/v1/promotion", "", `{"rules":[{"prefix":"a\ufffd","threshold":4}]}`); r.code != 200 {
		t.Fatalf("an escaped U+FFFD: %d %s", r.code, r.body)
	}
}

// A body over maxBody is a 413 with the API's JSON error body.
func TestBodyTooLarge(t *testing.T) {
	s := startServer(t, Config{}, newState())
	body := `{"rules":[{"prefix":"` + strings.Repeat("a", 10<<20) + `","threshold":4}]}`
	r := do(t, s, "PUT", "/admin/v1/promotion", "", body)
	if r.code != 413 {
		t.Fatalf("a 10 MB body: %d %.200s, want 413", r.code, r.body)
	}
	if m := r.json(t); !strings.Contains(m["error"].(string), "over") {
		t.Fatalf("a 10 MB body: %s", r.body)
	}
	// At the limit it is read and judged on its content.
	body = `{"threshold":4}` + strings.Repeat(" ", maxBody-len(`{"threshold":4}`))
	if r := do(t, s, "PUT", "/admin/v1/promotion", "", body); r.code != 200 {
		t.Fatalf("a body of exactly maxBody: %d %s", r.code, r.body)
	}
}

func TestInvalidUTF8Field(t *testing.T) {
	for _, c := range []struct {
		body, field string
		ok          bool
	}{
		{`{"a":"b"}`, "", true},
		{"{\"a\":{\"b\":[1,\"x\",{\"c\":\"\xff\"}]}}", "a.b.c", false},
		{"{\"a\":{\"b\":1},\"c\":\"\xff\"}", "c", false},
		{"[\"\xff\"]", "", false},
		{"\"\xff\"", "", false},
		{"{\"a\":\xff}", "", true}, // not JSON: the decoder says so
	} {
		field, ok := invalidUTF8Field([]byte(c.body))
		if field != c.field || ok != c.ok {
			t.Errorf("%q: %q %v, want %q %v", c.body, field, ok, c.field, c.ok)
		}
	}
}

// FuzzInvalidUTF8Field: the walk never panics, a UTF-8 body always
// passes, and a refused body is never UTF-8.
func FuzzInvalidUTF8Field(f *testing.F) {
	// Seeds: a good body, a bad value deep in arrays and objects, a bad
	// key, a bad top-level string, bad bytes outside any string (not
	// JSON), and an escaped U+FFFD.
	f.Add([]byte(`{"threshold":4,"rules":[{"prefix":"u:","threshold":2}]}`))
	f.Add([]byte("{\"rules\":[{\"prefix\":\"user:\xff\"}]}"))
	f.Add([]byte("{\"\xc0\":1}"))
	f.Add([]byte("\"\xed\xa0\x80\""))
	f.Add([]byte("{\"a\":1}\xff"))
	f.Add([]byte(`{"a":"\ufffd"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		_, ok := invalidUTF8Field(body)
		if utf8.Valid(body) && !ok {
			t.Fatalf("%q is UTF-8 and was refused", body)
		}
	})
}
