package mctext_test

import (
	"strings"
	"testing"

	"github.com/strata-cache/strata/internal/mctext"
	"github.com/strata-cache/strata/internal/memcachedtest"
)

// The client against the server whose protocol it speaks.
func TestAgainstMemcached(t *testing.T) {
	mc := memcachedtest.Start(t)
	c := mctext.Dial(t, mc.Addr)
	if _, ok := c.Get("k"); ok {
		t.Fatal("hit on an empty server")
	}
	// A value with a newline inside: Get reads the block by its length.
	if r := c.Set("k", "a\r\nb", 0); r != "STORED" {
		t.Fatalf("set: %q", r)
	}
	if v, ok := c.Get("k"); !ok || v != "a\r\nb" {
		t.Fatalf("get: %q %v", v, ok)
	}
	if _, _, errLine := c.TryGet(strings.Repeat("k", 251)); errLine == "" {
		t.Fatal("a key of 251 bytes was not refused")
	}
	if r := c.Delete("k"); r != "DELETED" {
		t.Fatalf("delete: %q", r)
	}
	if st := c.Stats(""); st["cmd_set"] != "1" || st["version"] == "" {
		t.Fatalf("stats: cmd_set %q version %q", st["cmd_set"], st["version"])
	}
	if got := c.Do("stats settings\r\n", mctext.EndsAtEND); got[len(got)-1] != "END" {
		t.Fatalf("stats settings ended with %q", got[len(got)-1])
	}
	c.Send("mg missing v\r\n")
	if l := c.ReadLine(); l != "EN" {
		t.Fatalf("mg: %q", l)
	}
}
