package tlsconn

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/tlstest"
)

// pair handshakes a client over a loopback socket with a server Conn,
// and returns the client and the server's socket, which the test reads
// and writes as an event loop would.
func pair(t *testing.T) (*tls.Conn, net.Conn, *Conn) {
	t.Helper()
	ca := tlstest.NewCA(t, "conn")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type result struct {
		c   *tls.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"})
		done <- result{c, err}
	}()
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Server(nc, &tls.Config{Certificates: []tls.Certificate{ca.Cert(t, "server")}}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { _ = r.c.Close(); _ = nc.Close() })
	return r.c, nc, s
}

// readSome reads what the socket has within a short wait.
func readSome(t *testing.T, nc net.Conn, want int) []byte {
	t.Helper()
	var got []byte
	buf := make([]byte, 64<<10)
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	for len(got) < want {
		n, err := nc.Read(buf)
		if err != nil {
			t.Fatalf("read %d of %d bytes: %v", len(got), want, err)
		}
		got = append(got, buf[:n]...)
	}
	return got
}

// TestDecryptByteByByte: ciphertext lent one byte at a time (every record
// split everywhere) yields the plaintext whole and in order, each byte
// taken exactly once; a reply sealed by Encrypt reads back at the client.
func TestDecryptByteByByte(t *testing.T) {
	client, nc, s := pair(t)
	msg := bytes.Repeat([]byte("get key\r\n"), 5000) // 45 KB: several records
	go func() { _, _ = client.Write(msg) }()
	// The ciphertext is at least the plaintext; read what arrives until
	// the plaintext is complete.
	var pending []byte
	buf := make([]byte, 64<<10)
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	for s.Decrypt(nil, 1<<20); s.Buffered() < len(msg); {
		if len(pending) == 0 {
			n, err := nc.Read(buf)
			if err != nil {
				t.Fatalf("after %d plaintext bytes: %v", s.Buffered(), err)
			}
			pending = append(pending, buf[:n]...)
		}
		if k := s.Decrypt(pending[:1], 1<<20); k != 1 {
			t.Fatalf("Decrypt took %d of 1 byte", k)
		}
		pending = pending[1:]
	}
	if !bytes.Equal(s.Peek(0), msg) || s.Err() != nil {
		t.Fatalf("plaintext differs (%d bytes, err %v)", s.Buffered(), s.Err())
	}
	if err := s.Encrypt([]byte("END\r\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Write(s.Out()); err != nil {
		t.Fatal(err)
	}
	s.Sent()
	got := make([]byte, 5)
	_ = client.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(client, got); err != nil || string(got) != "END\r\n" {
		t.Fatalf("client read %q %v", got, err)
	}
}

// TestDecryptStopsAtLimit: past the limit Decrypt takes no more
// ciphertext and says so (Held); once the reader drained, the rest comes.
func TestDecryptStopsAtLimit(t *testing.T) {
	client, nc, s := pair(t)
	msg := bytes.Repeat([]byte("x"), 100_000)
	go func() { _, _ = client.Write(msg) }()
	cipher := readSome(t, nc, len(msg))
	const limit = 20_000
	taken := s.Decrypt(cipher, limit)
	if !s.Held() || s.Buffered() < limit || s.Buffered() > limit+readChunk {
		t.Fatalf("held %v with %d plaintext bytes at limit %d", s.Held(), s.Buffered(), limit)
	}
	if taken >= len(cipher) {
		t.Fatalf("took all %d ciphertext bytes past the limit", taken)
	}
	total := s.Buffered()
	cipher = cipher[taken:]
	for total < len(msg) {
		s.Discard(s.Buffered())
		k := s.Decrypt(cipher, limit)
		cipher = cipher[k:]
		if s.Buffered() == 0 {
			t.Fatalf("no progress at %d of %d bytes", total, len(msg))
		}
		total += s.Buffered()
	}
	if total != len(msg) || len(cipher) != 0 {
		t.Fatalf("%d plaintext bytes, %d ciphertext bytes left", total, len(cipher))
	}
}

// TestStoreReloadRefusesWhole: a reload with a broken key keeps the
// certificate in force; a good one replaces it.
func TestStoreReloadRefusesWhole(t *testing.T) {
	ca := tlstest.NewCA(t, "store")
	dir := t.TempDir()
	_, cert, key := ca.WriteFiles(t, dir, "server")
	s, err := NewStore(Config{Cert: cert, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	first := s.Stats().Serial
	if err := os.WriteFile(filepath.Join(dir, "server.key"), []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(); err == nil {
		t.Fatal("a junk key was accepted")
	}
	if s.Stats().Serial != first {
		t.Fatal("a refused reload changed the certificate")
	}
	ca.WriteFiles(t, dir, "server")
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if s.Stats().Serial == first {
		t.Fatal("a good reload kept the old certificate")
	}
}

// TestConfigValidate: the rules of a listener's Config.
func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		cfg   Config
		field string
	}{
		{Config{}, ""},
		{Config{CA: "ca"}, "CA"},
		{Config{Cert: "c"}, "Cert"},
		{Config{Cert: "c", Key: "k", Verify: "maybe", HandshakeTimeout: time.Second}, "Verify"},
		{Config{Cert: "c", Key: "k", Verify: VerifyRequire, HandshakeTimeout: time.Second}, "Verify"},
		{Config{Cert: "c", Key: "k", CA: "a", Verify: VerifyRequest, HandshakeTimeout: time.Second}, ""},
		{Config{Cert: "c", Key: "k", HandshakeTimeout: time.Millisecond}, "HandshakeTimeout"},
	} {
		err := c.cfg.Validate()
		var field string
		if fe, ok := err.(*FieldError); ok {
			field = fe.Field
		} else if err != nil {
			field = "?"
		}
		if field != c.field {
			t.Errorf("%+v: refused field %q (%v), want %q", c.cfg, field, err, c.field)
		}
	}
}
