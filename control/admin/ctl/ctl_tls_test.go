package ctl

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/internal/tlsconn"
	"github.com/strata-cache/strata/internal/tlstest"
)

type configView struct{}

func (configView) EffectiveConfig() any { return map[string]string{"seen": "over https"} }

// TestCtlHTTPS: strata ctl reaches an admin API served over HTTPS with
// the authority from --ca or STRATA_CA, and a client certificate when the
// server asks for one; without the authority it fails.
func TestCtlHTTPS(t *testing.T) {
	ca := tlstest.NewCA(t, "ctl")
	caPath, cert, key := ca.WriteFiles(t, t.TempDir(), "server")
	_, ccert, ckey := ca.WriteFiles(t, t.TempDir(), "ops")
	store, err := tlsconn.NewStore(tlsconn.Config{Cert: cert, Key: key, CA: caPath, Verify: tlsconn.VerifyRequest})
	if err != nil {
		t.Fatal(err)
	}
	s, err := admin.New(admin.Config{Listen: "127.0.0.1:0", TLS: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		admin.Deps{Config: configView{}, TLS: store.ServerConfig()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	// The certificate names localhost, not 127.0.0.1's name.
	url := "https://localhost:" + s.Addr()[strings.LastIndexByte(s.Addr(), ':')+1:]

	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := Run(append([]string{"--admin", url}, args...), &out, io.Discard)
		return out.String(), err
	}
	if out, err := run("--ca", caPath, "get", "config"); err != nil || !strings.Contains(out, "over https") {
		t.Fatalf("--ca: %q %v", out, err)
	}
	if out, err := run("--ca", caPath, "--cert", ccert, "--key", ckey, "get", "config"); err != nil || !strings.Contains(out, "over https") {
		t.Fatalf("--ca with a client certificate: %q %v", out, err)
	}
	t.Setenv("STRATA_CA", caPath)
	if out, err := run("get", "config"); err != nil || !strings.Contains(out, "over https") {
		t.Fatalf("STRATA_CA: %q %v", out, err)
	}
	t.Setenv("STRATA_CA", "")
	if _, err := run("get", "config"); err == nil {
		t.Fatal("a server certificate from an unknown authority was accepted")
	}
}
