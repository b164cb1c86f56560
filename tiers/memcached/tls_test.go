package memcached

import (
	"os"
	"testing"

	"github.com/strata-cache/strata/internal/tlsconn"
	"github.com/strata-cache/strata/internal/tlstest"
)

// TestReloadTLSKeepsMaterialOnError: a reload that cannot read the CA
// keeps the configuration in force; a good one replaces it.
func TestReloadTLSKeepsMaterialOnError(t *testing.T) {
	caPath, _, _ := tlstest.NewCA(t, "pool").WriteFiles(t, t.TempDir(), "x")
	p, err := New(Config{Servers: []Server{{Addr: "127.0.0.1:1"}}, TLS: tlsconn.Dial{On: true, CA: caPath}}, newTestLoops(1))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	first := p.tls.Load()
	if err := os.WriteFile(caPath, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := p.ReloadTLS(); err == nil {
		t.Fatal("a CA file without a certificate was accepted")
	}
	if p.tls.Load() != first {
		t.Fatal("a refused reload replaced the material")
	}
	other, _, _ := tlstest.NewCA(t, "pool-3").WriteFiles(t, t.TempDir(), "y")
	b, err := os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(caPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := p.ReloadTLS(); err != nil {
		t.Fatal(err)
	}
	if p.tls.Load() == first {
		t.Fatal("a good reload kept the old material")
	}
}
