package admin

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/tlsconn"
	"github.com/strata-cache/strata/internal/tlstest"

	"github.com/strata-cache/strata/internal/stall"
)

// startHTTPS starts the server over the memcached listener's store.
func startHTTPS(t *testing.T, store *tlsconn.Store, st *state) *Server {
	t.Helper()
	cfg := Config{Listen: "127.0.0.1:0", TLS: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	s, err := New(cfg, Deps{Promotion: st, Sampler: st, Tiers: st, Config: st, Metrics: st, Clock: stall.Process(), TLS: store.ServerConfig()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	return s
}

// presented is the serial of the certificate a new connection to addr sees.
func presented(t *testing.T, addr string, cfg *tls.Config) string {
	t.Helper()
	c, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber.Text(16)
}

// TestHTTPS: with TLS the API answers over HTTPS only, with the memcached
// listener's certificate, and follows its reload; a client that does not
// trust the authority gets nothing.
func TestHTTPS(t *testing.T) {
	ca := tlstest.NewCA(t, "admin")
	dir := t.TempDir()
	_, cert, key := ca.WriteFiles(t, dir, "server")
	store, err := tlsconn.NewStore(tlsconn.Config{Cert: cert, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	s := startHTTPS(t, store, newState())
	ctx := context.Background()
	trusting := &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"}
	c := NewTLSClient("https://"+s.Addr(), "", 10*time.Second, trusting)
	if p, err := c.Promotion(ctx); err != nil || p.Threshold != 32 {
		t.Fatalf("over HTTPS: %+v %v", p, err)
	}
	if _, err := NewClient("http://"+s.Addr(), "", 10*time.Second).Promotion(ctx); err == nil {
		t.Fatal("plain HTTP was answered on the HTTPS listener")
	}
	if _, err := NewTLSClient("https://"+s.Addr(), "", 10*time.Second, &tls.Config{ServerName: "localhost"}).Promotion(ctx); err == nil {
		t.Fatal("a client without the authority accepted the certificate")
	}

	before := presented(t, s.Addr(), trusting)
	ca.WriteFiles(t, dir, "server")
	if err := store.Reload(); err != nil {
		t.Fatal(err)
	}
	if after := presented(t, s.Addr(), trusting); after == before {
		t.Fatalf("serial %s before and after the reload", after)
	}
	if _, err := c.Promotion(ctx); err != nil {
		t.Fatalf("after the reload: %v", err)
	}
}

// TestHTTPSClientCertificates: with [tls] ca the admin API asks clients
// for certificates as the memcached listener does.
func TestHTTPSClientCertificates(t *testing.T) {
	ca := tlstest.NewCA(t, "admin")
	caPath, cert, key := ca.WriteFiles(t, t.TempDir(), "server")
	store, err := tlsconn.NewStore(tlsconn.Config{Cert: cert, Key: key, CA: caPath})
	if err != nil {
		t.Fatal(err)
	}
	s := startHTTPS(t, store, newState())
	ctx := context.Background()
	anon := &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"}
	if _, err := NewTLSClient("https://"+s.Addr(), "", 10*time.Second, anon).Promotion(ctx); err == nil {
		t.Fatal("a client without a certificate was served")
	}
	_, ccert, ckey := ca.WriteFiles(t, t.TempDir(), "ops")
	withCert, err := tlsconn.Dial{On: true, CA: caPath, Cert: ccert, Key: ckey, ServerName: "localhost"}.Load()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewTLSClient("https://"+s.Addr(), "", 10*time.Second, withCert).Promotion(ctx); err != nil {
		t.Fatalf("a client with a certificate: %v", err)
	}
}

// TestHTTPSNeedsCertificate: TLS without the listener's material is
// refused, naming the field.
func TestHTTPSNeedsCertificate(t *testing.T) {
	_, err := New(Config{Listen: "127.0.0.1:0", TLS: true}, Deps{})
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Field != "TLS" {
		t.Fatalf("New with TLS and no certificate: %v", err)
	}
}
