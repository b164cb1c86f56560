package etcdtest

import (
	"testing"
)

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
