package tlsconn

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/strata-cache/strata/internal/tlstest"
)

// The measurement behind the package (docs/tls.md has the figures): a
// gnet server that answers every line with a 100-byte get reply, served
// plain, through the bridge (two goroutines and a socket pair per
// connection) and through this package (records on the loop), to a
// crypto/tls client over loopback at depth 1 and 16.

var benchReply = []byte("VALUE key 0 100\r\n" + string(bytes.Repeat([]byte{'v'}, 100)) + "\r\nEND\r\n")

type benchServer struct {
	gnet.BuiltinEventEngine
	eng     gnet.Engine
	ticking chan struct{}
	once    sync.Once
	bridge  Bridge
	ln      net.Listener
	done    chan error
}

func (h *benchServer) OnBoot(eng gnet.Engine) gnet.Action { h.eng = eng; return gnet.None }

func (h *benchServer) OnTick() (time.Duration, gnet.Action) {
	h.once.Do(func() { close(h.ticking) })
	return time.Second, gnet.None
}

func (h *benchServer) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	if t, ok := c.Context().(*Conn); ok {
		_ = c.Wake(nil) // records read during the handshake wait in t
		_ = t
	}
	return nil, gnet.None
}

// answer replies to each complete line of p and returns the bytes used.
func answer(p []byte, out []byte) (int, []byte) {
	used := 0
	for {
		i := bytes.IndexByte(p[used:], '\n')
		if i < 0 {
			return used, out
		}
		used += i + 1
		out = append(out, benchReply...)
	}
}

type outBuf struct{ b []byte }

var outPool = sync.Pool{New: func() any { return &outBuf{} }}

func (h *benchServer) OnTraffic(c gnet.Conn) gnet.Action {
	ob := outPool.Get().(*outBuf)
	defer outPool.Put(ob)
	raw, _ := c.Peek(-1)
	t, ok := c.Context().(*Conn)
	if !ok {
		n, out := answer(raw, ob.b[:0])
		ob.b = out
		if n > 0 {
			_, _ = c.Discard(n)
			_, _ = c.Write(out)
		}
		return gnet.None
	}
	if k := t.Decrypt(raw, 1<<20); k > 0 {
		_, _ = c.Discard(k)
	}
	n, out := answer(t.Peek(0), ob.b[:0])
	ob.b = out
	t.Discard(n)
	if len(out) > 0 {
		_ = t.Encrypt(out)
	}
	if o := t.Out(); len(o) > 0 {
		_, _ = c.Write(o)
		t.Sent()
	}
	if t.Err() != nil {
		return gnet.Close
	}
	return gnet.None
}

func startBench(tb testing.TB, mode string, cfg *tls.Config) *benchServer {
	tb.Helper()
	dir := tb.TempDir()
	h := &benchServer{ticking: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		h.done <- gnet.Run(h, "unix://"+filepath.Join(dir, "idle.sock"), gnet.WithNumEventLoop(1),
			gnet.WithTicker(true), gnet.WithTCPNoDelay(gnet.TCPNoDelay))
	}()
	<-h.ticking
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	h.ln = ln
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go h.serve(mode, cfg, nc)
		}
	}()
	tb.Cleanup(func() {
		_ = ln.Close()
		h.bridge.Close()
		_ = h.eng.Stop(context.Background())
		<-h.done
	})
	return h
}

func (h *benchServer) serve(mode string, cfg *tls.Config, nc net.Conn) {
	ctx := gnet.NewNetConnContext(context.Background(), nc)
	switch mode {
	case "bridge":
		tc := tls.Server(nc, cfg)
		if err := tc.Handshake(); err != nil {
			_ = tc.Close()
			return
		}
		pc, err := h.bridge.Wrap(tc)
		if err != nil {
			return
		}
		ctx = gnet.NewNetConnContext(context.Background(), pc)
	case "engine":
		t, err := Server(nc, cfg, 5*time.Second)
		if err != nil {
			return
		}
		ctx = gnet.NewContext(ctx, t)
	}
	ch, err := h.eng.Register(ctx)
	if err == nil {
		<-ch
	}
}

func dialBench(tb testing.TB, mode, addr string, cfg *tls.Config) net.Conn {
	tb.Helper()
	var c net.Conn
	var err error
	if mode == "plain" {
		c, err = net.Dial("tcp", addr)
	} else {
		c, err = tls.Dial("tcp", addr, cfg)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func BenchmarkRoundTrip(b *testing.B) {
	ca := tlstest.NewCA(b, "bench")
	srvCfg := &tls.Config{Certificates: []tls.Certificate{ca.Cert(b, "server")}, MinVersion: tls.VersionTLS12}
	cliCfg := &tls.Config{RootCAs: ca.Pool, ServerName: "localhost", ClientSessionCache: tls.NewLRUClientSessionCache(8)}
	for _, mode := range []string{"plain", "bridge", "engine"} {
		h := startBench(b, mode, srvCfg)
		for _, depth := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/depth=%d", mode, depth), func(b *testing.B) {
				c := dialBench(b, mode, h.ln.Addr().String(), cliCfg)
				defer c.Close()
				req := bytes.Repeat([]byte("get key\r\n"), depth)
				resp := make([]byte, depth*len(benchReply))
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i += depth {
					if _, err := c.Write(req); err != nil {
						b.Fatal(err)
					}
					if _, err := io.ReadFull(c, resp); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkHandshake: a new connection per operation, each with a full
// handshake (no resumption) and one request.
func BenchmarkHandshake(b *testing.B) {
	ca := tlstest.NewCA(b, "bench")
	srvCfg := &tls.Config{Certificates: []tls.Certificate{ca.Cert(b, "server")}, MinVersion: tls.VersionTLS12}
	for _, mode := range []string{"bridge", "engine"} {
		h := startBench(b, mode, srvCfg)
		b.Run(mode, func(b *testing.B) {
			cliCfg := &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"}
			resp := make([]byte, len(benchReply))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				c := dialBench(b, mode, h.ln.Addr().String(), cliCfg)
				if _, err := c.Write([]byte("get key\r\n")); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(c, resp); err != nil {
					b.Fatal(err)
				}
				_ = c.Close()
			}
		})
	}
}

// TestKernelTLS reports whether this kernel offers kernel TLS (the tls
// upper-layer protocol); the package does not use it (see doc.go).
func TestKernelTLS(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_ulp")
	if err != nil {
		t.Skip(err)
	}
	t.Logf("tcp_available_ulp: %q", bytes.TrimSpace(b))
}
