package etcdtest

import (
	"fmt"
	"testing"
)

// recorder stands in for the test a helper reports to.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper()                      {}
func (r *recorder) Fatalf(f string, args ...any) { r.fatal = fmt.Sprintf(f, args...) }
func (r *recorder) Skip(args ...any)             { r.skip = fmt.Sprint(args...) }

// A missing etcd fails under CI even when a skip was asked for; outside
// CI the skip switch is honoured.
func TestMissingBinary(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("STRATA_SKIP_ETCD", "1")
	for _, tc := range []struct {
		ci         string
		fail, skip bool
	}{{"true", true, false}, {"", false, true}} {
		t.Setenv("CI", tc.ci)
		r := &recorder{TB: t}
		Binary(r)
		if (r.fatal != "") != tc.fail || (r.skip != "") != tc.skip {
			t.Errorf("CI=%q: fatal %q skip %q", tc.ci, r.fatal, r.skip)
		}
	}
}

// The proxy forwards to a live server and a cut drops the client.
func TestStartAndProxy(t *testing.T) {
	s := Start(t)
	p := NewProxy(t, s.Endpoint)
	probe := &Server{Endpoint: p.Addr}
	if !probe.healthy() {
		t.Fatalf("etcd not healthy through the proxy")
	}
	p.Cut()
	if probe.healthy() {
		t.Fatalf("healthy through a cut proxy")
	}
	p.Heal()
	if !probe.healthy() {
		t.Fatalf("not healthy after the heal")
	}
}
