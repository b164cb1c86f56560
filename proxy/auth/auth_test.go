package auth

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseUsers(t *testing.T) {
	got, err := ParseUsers([]byte("alice:secret\r\n\nbob:pa:ss\ncarol:\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"alice": "secret", "bob": "pa:ss", "carol": ""}
	if len(got) != len(want) {
		t.Fatalf("got %d accounts, want %d", len(got), len(want))
	}
	for u, p := range want {
		if string(got[u]) != p {
			t.Errorf("%s: password %q, want %q", u, got[u], p)
		}
	}
	for _, bad := range []string{"", "\n\n", "alice\n", ":nouser\n", "ok:1\nbroken-hunter2\n"} {
		_, err := ParseUsers([]byte(bad))
		if err == nil {
			t.Errorf("%q: accepted", bad)
		} else if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: the error %q quotes the line", bad, err)
		}
	}
}

func writeUsers(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestCheckAndReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users")
	writeUsers(t, path, "alice:secret\n")
	u, err := New(Config{UsersFile: path})
	if err != nil {
		t.Fatal(err)
	}
	if !u.Check([]byte("alice"), []byte("secret")) || u.Check([]byte("alice"), []byte("secreT")) ||
		u.Check([]byte("bob"), []byte("secret")) || u.Check([]byte("alice"), nil) {
		t.Fatal("Check answers wrongly")
	}
	if a, f := u.Counts(); a != 4 || f != 3 {
		t.Fatalf("counts %d attempts, %d failures; want 4, 3", a, f)
	}
	writeUsers(t, path, "bob:two\n")
	if err := u.Reload(); err != nil {
		t.Fatal(err)
	}
	if u.Check([]byte("alice"), []byte("secret")) || !u.Check([]byte("bob"), []byte("two")) {
		t.Fatal("Reload did not replace the accounts")
	}
	// A file that no longer parses, or is gone, leaves bob in.
	writeUsers(t, path, "garbage\n")
	if err := u.Reload(); err == nil {
		t.Fatal("Reload accepted a bad file")
	}
	os.Remove(path)
	if err := u.Reload(); err == nil {
		t.Fatal("Reload accepted a missing file")
	}
	if !u.Check([]byte("bob"), []byte("two")) {
		t.Fatal("a failed Reload dropped the accounts in force")
	}
}

func TestNewRefuses(t *testing.T) {
	if _, err := New(Config{}); !errors.Is(err, errNoFile) {
		t.Errorf("New without a file: %v", err)
	}
	if _, err := New(Config{UsersFile: filepath.Join(t.TempDir(), "absent")}); err == nil {
		t.Error("New with a missing file succeeded")
	}
	var fe *FieldError
	if err := (Config{UsersFile: "x", MaxDelay: time.Hour}).Validate(); !errors.As(err, &fe) || fe.Field != "MaxDelay" {
		t.Errorf("MaxDelay of an hour: %v", err)
	}
	if err := (Config{SlowAfter: -1}).Validate(); !errors.As(err, &fe) || fe.Field != "SlowAfter" {
		t.Errorf("negative SlowAfter: %v", err)
	}
}

func TestDelay(t *testing.T) {
	c := Config{SlowAfter: 2, MaxDelay: time.Second}
	want := []time.Duration{0, 0, 0, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond,
		800 * time.Millisecond, time.Second, time.Second}
	for fails, w := range want {
		if got := c.Delay(fails); got != w {
			t.Errorf("Delay(%d) = %v, want %v", fails, got, w)
		}
	}
	if got := (Config{}).Delay(1000); got != defaultMaxDelay {
		t.Errorf("default Delay(1000) = %v, want %v", got, defaultMaxDelay)
	}
}

// FuzzParseUsers: a parsed file round-trips, and no error quotes input.
func FuzzParseUsers(f *testing.F) {
	for _, s := range []string{"alice:secret\n", "a:b\r\nc:d:e\n\n", "x\n", ":y\n", "u:\n", "\xff:\x00\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		accounts, err := ParseUsers(data)
		if err != nil {
			if len(data) > 12 && strings.Contains(err.Error(), string(data)) {
				t.Fatalf("error %q quotes the input", err)
			}
			return
		}
		var b strings.Builder
		for u, p := range accounts {
			if u == "" || strings.ContainsAny(u, ":\n") || strings.Contains(string(p), "\n") {
				t.Fatalf("account %q:%q cannot come from a line", u, p)
			}
			b.WriteString(u + ":" + string(p) + "\n")
		}
		again, err := ParseUsers([]byte(b.String()))
		if err != nil || len(again) != len(accounts) {
			t.Fatalf("round trip of %q: %v", b.String(), err)
		}
	})
}
