package configfile

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// addr decodes itself, as a memcached server entry does: the decoder
// counts everything below it as decoded.
type addr struct{ Host string }

func (a *addr) UnmarshalTOML(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("want a string, not %T", v)
	}
	a.Host = s
	return nil
}

type pool struct {
	Timeout Duration `toml:"timeout"`
}

type tier struct {
	Memory  Size   `toml:"memory"`
	Servers []addr `toml:"servers"`
	pool
	Note string // no tag: no key
}

type rule struct {
	Prefix    string `toml:"prefix"`
	Threshold int64  `toml:"threshold"`
}

type schema struct {
	L1        tier `toml:"l1"`
	Promotion struct {
		Threshold *int64 `toml:"threshold"`
		Rules     []rule `toml:"rule"`
	} `toml:"promotion"`
}

var testSchema = SchemaOf(&schema{})

func TestSchemaKeys(t *testing.T) {
	want := []string{"l1", "l1.memory", "l1.servers", "l1.timeout", "promotion", "promotion.rule",
		"promotion.rule.prefix", "promotion.rule.threshold", "promotion.threshold"}
	if got := testSchema.Keys(); !reflect.DeepEqual(got, want) {
		t.Fatalf("%q\nwant %q", got, want)
	}
	if !testSchema.Known("l1.timeout") || testSchema.Known("l1.note") || testSchema.Known("l1.Note") {
		t.Fatal("Known")
	}
}

func decode(t *testing.T, text string) (*schema, *File, Errors) {
	t.Helper()
	var v schema
	f, errs, fatal := testSchema.Decode("f.toml", []byte(text), &v)
	if fatal != nil {
		t.Fatalf("fatal: %v", fatal)
	}
	return &v, f, errs
}

func TestDecodeValues(t *testing.T) {
	v, f, errs := decode(t, "[l1]\nmemory = \"64MiB\"\ntimeout = \"2s\"\nservers = [\"a:1\", \"b:2\"]\n\n[[promotion.rule]]\nprefix = \"a\"\n[[promotion.rule]]\nprefix = \"b\"\nthreshold = 0\n")
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if v.L1.Memory != 64<<20 || v.L1.Timeout.String() != "2s" || len(v.L1.Servers) != 2 || len(v.Promotion.Rules) != 2 {
		t.Fatalf("%+v", v)
	}
	if !f.Meta.IsDefined("promotion", "rule") || f.Meta.IsDefined("promotion", "threshold") {
		t.Fatal("Meta")
	}
	if got := f.ErrAt("promotion.rule[1].threshold", "%d is out of range", 0).Error(); got != "f.toml:10: promotion.rule[1].threshold: 0 is out of range" {
		t.Fatal(got)
	}
	if got := f.ErrAt("promotion.threshold", "unset").Error(); got != "f.toml: promotion.threshold: unset" {
		t.Fatal(got)
	}
}

// Each key no field takes is reported once, on its line, with a
// suggestion: a sibling when the table exists, else any key.
func TestDecodeUnknownKeys(t *testing.T) {
	_, _, errs := decode(t, "[l1]\nmemroy = \"1MiB\"\nMemory = \"2MiB\"\n[metrics]\nport = 1\nhost = \"x\"\n"+
		"[[promotion.rule]]\nprefix = \"a\"\n[[promotion.rule]]\ntreshold = 3\n[promoton]\nthreshold = 1\n")
	want := []string{
		`f.toml:2: l1.memroy: unknown key (did you mean "memory"?)`,
		`f.toml:4: metrics: unknown section`,
		`f.toml:10: promotion.rule[1].treshold: unknown key (did you mean "threshold"?)`,
		`f.toml:11: promoton: unknown section (did you mean "promotion"?)`,
		`f.toml:3: l1.Memory: unknown key (keys are lower case: "l1.memory")`,
	}
	if got := strings.Split(errs.Error(), "\n"); !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A syntax or type error stops decoding, on its line and key.
func TestDecodeFatal(t *testing.T) {
	for text, want := range map[string]string{
		"[l1]\nmemory = \"lots\"\n":           `f.toml:2: l1.memory: size "lots": want a number and a unit such as "64MiB"`,
		"[l1]\ntimeout = 10\n":                `f.toml:2: l1.timeout: duration "10" has no unit: write e.g. "10s"`,
		"[l1]\nservers = [1]\n":               `f.toml:2: l1.servers: want a string, not int64`,
		"[promotion]\nthreshold = \"many\"\n": `f.toml:2: promotion.threshold:`,
		"[l1]\nmemory = \"1MiB\n":             `f.toml:2:`,
	} {
		var v schema
		_, _, fatal := testSchema.Decode("f.toml", []byte(text), &v)
		if fatal == nil || !strings.HasPrefix(fatal.Error(), want) {
			t.Errorf("%q: %v, want %q", text, fatal, want)
		}
	}
}

func TestSchemaOfRefusesANonStruct(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Fatal("no panic")
		}
	}()
	SchemaOf(3)
}
