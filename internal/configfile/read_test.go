package configfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-cache/strata/internal/tomlpos"
)

var testLimits = Limits{Bytes: 1 << 10, Bounds: tomlpos.Limits{Depth: 4, KeyLen: 16, Parts: 3}, EmptyHint: "leave it out"}

func write(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadWithinLimits(t *testing.T) {
	text := "# [[[[ a.b.c.d.e\n[l1]\nmemory = \"[[[[[[[[ a.b.c.d\"\n"
	data, err := Read(write(t, text), testLimits)
	if err != nil || string(data) != text {
		t.Fatalf("%q, %v", data, err)
	}
}

// What is refused before decoding: an empty file and one past the
// bounds as an *Error, a file too large or missing as a plain error.
func TestReadRefuses(t *testing.T) {
	for _, c := range []struct {
		name, text, want string
		located          bool
	}{
		{"empty", "", ": the file sets no key (empty, or only comments and blank lines); leave it out", true},
		{"only comments", "\n  # a\n\n#b", ": the file sets no key", true},
		{"nesting", "[l1]\nx = [[[[[1]]]]]\n", ":2: nesting over the limit of 4 for a configuration file", true},
		{"key length", strings.Repeat("k", 17) + " = 1\n", ":1: key length over the limit of 16", true},
		{"key parts", "[a.b.c.d]\n", ":1: key parts over the limit of 3", true},
		{"too large", "# " + strings.Repeat("x", 1<<10) + "\nx = 1\n", ": over the limit of 1024 bytes for a configuration file", false},
	} {
		path := write(t, c.text)
		_, err := Read(path, testLimits)
		var e *Error
		if err == nil || !strings.HasPrefix(err.Error(), path+c.want) || errors.As(err, &e) != c.located {
			t.Errorf("%s: %v (an *Error: %v), want %q", c.name, err, errors.As(err, &e), c.want)
		}
	}
	if _, err := Read(filepath.Join(t.TempDir(), "none.toml"), testLimits); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}
