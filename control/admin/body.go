package admin

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// invalidUTF8Field reports the field of body whose string (its value, or
// its own name) holds bytes that are not UTF-8, as a dotted path of
// object keys ("rules.prefix"; array elements add nothing, as in
// json.UnmarshalTypeError.Field); "" for a top-level string or a body
// that is not JSON. ok is false when there is one. encoding/json would
// otherwise store such bytes as U+FFFD, a value the client never sent.
//
// It walks body's tokens only when body is not UTF-8 as a whole, so a
// good body costs one utf8.Valid.
func invalidUTF8Field(body []byte) (field string, ok bool) {
	if utf8.Valid(body) {
		return "", true
	}
	type frame struct {
		object, wantKey bool
		key             string
	}
	var stack []frame
	path := func(last string) string {
		var keys []string
		for _, f := range stack {
			if f.object && f.key != "" {
				keys = append(keys, f.key)
			}
		}
		if last != "" {
			keys = append(keys, last)
		}
		return strings.Join(keys, ".")
	}
	// valueDone marks the value of the innermost object's key consumed.
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for {
		from := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return "", true // not JSON: the decoder names the syntax error
		}
		to := dec.InputOffset()
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, frame{object: true, wantKey: true})
			case '[':
				stack = append(stack, frame{})
			default:
				stack = stack[:len(stack)-1]
				valueDone()
			}
		case string:
			// Between the offsets are the string token and the ASCII
			// punctuation and spaces before it.
			bad := !utf8.Valid(body[from:to])
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
				if bad {
					return path(v), false
				}
				stack[n-1].key, stack[n-1].wantKey = v, false
				continue
			}
			if bad {
				return path(""), false
			}
			valueDone()
		default:
			valueDone()
		}
	}
}
