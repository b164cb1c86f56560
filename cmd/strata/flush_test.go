package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
)

// flush_all follows who owns the data: the embedded default answers as
// memcached does (one process owns it); memcached pools, which other
// clients may share, refuse it unless the file allows it.
func TestFlushAllFollowsOwnership(t *testing.T) {
	const script = "set k 0 0 1\r\nx\r\nflush_all\r\nget k\r\nquit\r\n"
	ref := memcachedtest.Start(t).Addr
	want, err := memcachedtest.Exchange(ref, []byte(script), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != "STORED\r\nOK\r\nEND\r\n" {
		t.Fatalf("memcached answered %q", want)
	}
	embedded := startApp(t, "")
	if got, _ := memcachedtest.Exchange(embedded.proxy.Addr(), []byte(script), 5*time.Second); string(got) != string(want) {
		t.Errorf("embedded default: %q, memcached %q", got, want)
	}

	l1, l2 := memcachedtest.Start(t), memcachedtest.Start(t)
	pools := fmt.Sprintf("[l1]\nservers = [%q]\ntimeout = \"5s\"\n[l2]\nservers = [%q]\ntimeout = \"5s\"\n", l1.Addr, l2.Addr)
	refused := startApp(t, pools)
	warmPool(t, refused.proxy.Addr())
	got, _ := memcachedtest.Exchange(refused.proxy.Addr(), []byte(script), 5*time.Second)
	if string(got) != "STORED\r\nCLIENT_ERROR flush_all not allowed\r\nVALUE k 0 1\r\nx\r\nEND\r\n" {
		t.Errorf("pools by default: %q", got)
	}
	allowed := startApp(t, pools+"[limits]\nflush_all = true\n")
	warmPool(t, allowed.proxy.Addr())
	if got, _ := memcachedtest.Exchange(allowed.proxy.Addr(), []byte(script), 5*time.Second); string(got) != string(want) {
		t.Errorf("pools with flush_all = true: %q, memcached %q", got, want)
	}
	off := startApp(t, "[limits]\nflush_all = false\n")
	if got, _ := memcachedtest.Exchange(off.proxy.Addr(), []byte(script), 5*time.Second); string(got) != "STORED\r\nCLIENT_ERROR flush_all not allowed\r\nVALUE k 0 1\r\nx\r\nEND\r\n" {
		t.Errorf("embedded with flush_all = false: %q", got)
	}
}
