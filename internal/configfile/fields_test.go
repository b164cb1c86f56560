package configfile

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

type fieldErr struct {
	field string
	err   error
}

func (e *fieldErr) Error() string     { return e.field + ": " + e.err.Error() }
func (e *fieldErr) FieldName() string { return e.field }
func (e *fieldErr) Unwrap() error     { return e.err }

var _ FieldError = (*fieldErr)(nil)

func TestFieldKeys(t *testing.T) {
	keys := FieldKeys{"Rate": "hotkeys.rate", "Rules[].Split": "hotkeys.rule[].split", "Families[]": "sampler.family[]"}
	for field, want := range map[string]string{
		"Rate": "hotkeys.rate", "Rules[2].Split": "hotkeys.rule[2].split", "Families[0]": "sampler.family[0]",
	} {
		if got, ok := keys.Key(field); !ok || got != want {
			t.Errorf("%s: %q %v, want %q", field, got, ok, want)
		}
	}
	if _, ok := keys.Key("Other"); ok {
		t.Error("an unmapped field has a key")
	}
}

// Each refused field is reported at its key; a field mapped to "" is
// not reported; an unmapped field or an error naming none is reported
// whole at the section.
func TestFields(t *testing.T) {
	keys := FieldKeys{"Rate": "hotkeys.rate", "Rules[].Split": "hotkeys.rule[].split", "MaxItemSize": ""}
	err := errors.Join(
		&fieldErr{"Rate", errors.New("0 is out of range")},
		fmt.Errorf("wrapped: %w", &fieldErr{"Rules[1].Split", errors.New("bad split")}),
		&fieldErr{"MaxItemSize", errors.New("judged elsewhere")},
		&fieldErr{"Unknown", errors.New("no key")},
		errors.New("no field"),
	)
	var got []string
	Fields(err, keys, "hotkeys", func(key string, e error) { got = append(got, key+": "+e.Error()) })
	want := []string{
		"hotkeys.rate: 0 is out of range",
		"hotkeys.rule[1].split: bad split",
		"hotkeys: Unknown: no key",
		"hotkeys: no field",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	Fields(nil, keys, "hotkeys", func(string, error) { t.Fatal("reported nil") })
}
