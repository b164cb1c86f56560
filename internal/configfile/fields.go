package configfile

import (
	"errors"
	"regexp"
	"strings"
)

// FieldError is how a package's Config.Validate refuses one field: the Go
// field's name ("MaxInflight", "Rules[2].Split") and why. The rules are
// the package's; the file only knows where each field was written, which
// a FieldKeys says.
type FieldError interface {
	error
	FieldName() string
	Unwrap() error
}

// FieldKeys maps the fields of one package's Config onto the file's keys.
// A field mapped to "" is set from a key another package's Validate
// already judges by the same rule, and is not reported twice. An element
// of a list is written with empty brackets on both sides ("Rules[].Split"
// → "promotion.rule[].split"); the field's index goes into the key's
// brackets.
type FieldKeys map[string]string

var fieldIndexRE = regexp.MustCompile(`\[(\d+)\]`)

// Key is the file's key for field, and whether the map has the field.
func (k FieldKeys) Key(field string) (string, bool) {
	key, ok := k[fieldIndexRE.ReplaceAllString(field, "[]")]
	if m := fieldIndexRE.FindStringSubmatch(field); ok && m != nil {
		key = strings.Replace(key, "[]", "["+m[1]+"]", 1)
	}
	return key, ok
}

// Fields splits err, what a package's Validate returned, into one problem
// per refused field and calls report with each field's key and reason.
// Joined errors (errors.Join) are walked one by one. A field keys does
// not have, or an error that names no field, is reported whole at
// section; a field mapped to "" is not reported.
func Fields(err error, keys FieldKeys, section string, report func(key string, err error)) {
	if err == nil {
		return
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			Fields(e, keys, section, report)
		}
		return
	}
	var fe FieldError
	if errors.As(err, &fe) {
		if key, ok := keys.Key(fe.FieldName()); ok {
			if key != "" {
				report(key, fe.Unwrap())
			}
			return
		}
	}
	report(section, err)
}
