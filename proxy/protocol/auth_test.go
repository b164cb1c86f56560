package protocol

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/proxy/auth"
)

// Authentication side by side with memcached: -Y for text, -S for binary
// SASL. The Debian memcached's SASL checks passwords against a sasldb this
// machine has no tool to write, so a binary success is checked against
// strata alone; every refusal is compared byte for byte.

// authUsers writes a users file memcached (which may run as nobody) can
// read, and returns it with the Users strata loads from it.
func authUsers(t *testing.T) (string, *auth.Users) {
	t.Helper()
	dir, err := os.MkdirTemp("", "strata-auth")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	path := filepath.Join(dir, "users")
	if err := os.WriteFile(path, []byte("alice:secret\nbob:pa ss\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := auth.New(auth.Config{UsersFile: path})
	if err != nil {
		t.Fatal(err)
	}
	return path, u
}

// authRun runs data through a parser that requires auth, answering from a
// fresh store, and returns the replies.
func authRun(t *testing.T, users *auth.Users, data []byte) (out []byte, closed bool) {
	t.Helper()
	store, _ := newTestStore(t, caseClock())
	p := NewParser(Limits{Auth: users})
	var cmd Command
	for len(data) > 0 {
		n, err := p.Parse(data, &cmd)
		if err != nil {
			return cmd.AppendReply(out, nil), true
		}
		if n == 0 {
			break
		}
		data = data[n:]
		out = cmd.AppendReply(out, store.do(cmd.Reqs))
	}
	return out, false
}

// authSession runs steps on one connection to memcached at addr and through
// one parser that requires auth, step by step: each step's replies are read
// before the next is sent, because memcached, while a connection is not
// authenticated, keeps only the last of the replies to one read (strata
// answers each). It fails t where the replies differ; skip names steps
// whose replies are not compared, and why.
func authSession(t *testing.T, addr string, users *auth.Users, steps [][]byte, skip map[int]string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	store, _ := newTestStore(t, caseClock())
	p := NewParser(Limits{Auth: users})
	var cmd Command
	closed := false
	for i, step := range steps {
		var got []byte
		for data := step; len(data) > 0 && !closed; {
			n, err := p.Parse(data, &cmd)
			if err != nil {
				got, closed = cmd.AppendReply(got, nil), true
				break
			}
			if n == 0 {
				t.Fatalf("step %d: %q is incomplete", i, step)
			}
			data = data[n:]
			got = cmd.AppendReply(got, store.do(cmd.Reqs))
		}
		if _, err := c.Write(step); err != nil {
			t.Fatal(err)
		}
		n := len(got)
		if _, ok := skip[i]; ok {
			n = binHeaderLen // a binary step: read its header, then its body
		}
		want := make([]byte, n)
		if _, err := io.ReadFull(c, want); err != nil {
			t.Fatalf("step %d %q: memcached answered %q (%v); strata %q", i, step, want, err, got)
		}
		if why, ok := skip[i]; ok {
			body := make([]byte, binary.BigEndian.Uint32(want[8:]))
			io.ReadFull(c, body)
			t.Logf("step %d not compared: %s", i, why)
		} else if !bytes.Equal(got, want) {
			t.Errorf("step %d %q:\n got %q\nwant %q", i, step, got, want)
		}
	}
	// Nothing more from memcached.
	c.(*net.TCPConn).CloseWrite()
	if rest, _ := io.ReadAll(c); len(rest) > 0 {
		t.Errorf("memcached sent %q more", rest)
	}
}

func TestTextAuthLikeMemcached(t *testing.T) {
	path, users := authUsers(t)
	mc := startAuthMemcached(t, "-Y", path)
	authSession(t, mc, users, [][]byte{
		[]byte("get k\r\n"), []byte("version\r\n"), []byte("set\r\n"), []byte("set a b c\r\n"), []byte("set a 0 0 x\r\n"),
		[]byte("set a 0 0 12\r\nalice secreT\r\n"), []byte("set x 1 2 11\r\nbob pa ss x\r\n"), []byte("set a 0 0 5\r\nalice\r\n"),
		[]byte("set a 0 0 2\r\nab\n\n"), []byte("set a 0 0 12\r\nalice secret\r\n"),
		[]byte("set k 0 0 1\r\nv\r\nget k\r\nset a 0 0 12\r\nalice secret\r\n"),
	}, nil)
	authSession(t, mc, users, [][]byte{[]byte("set a 0 0 10\r\nbob pa ss\x00\r\n"), []byte("mn\r\n")}, nil)
	if a, f := users.Counts(); a != 4 || f != 3 {
		t.Errorf("counts: %d attempts, %d failures; want 4, 3", a, f)
	}
}

func TestBinaryAuthLikeMemcached(t *testing.T) {
	path, users := authUsers(t)
	// memcached -S does not start without a SASL configuration to read.
	conf := filepath.Join(filepath.Dir(path), "memcached.conf")
	if err := os.WriteFile(conf, []byte("mech_list: plain\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SASL_CONF_PATH", filepath.Dir(path))
	t.Setenv("MEMCACHED_SASL_PWDB", path)
	mc := startAuthMemcached(t, "-S")
	authSession(t, mc, users, [][]byte{
		breq(binVersion, "", "", "", 1, 0), breq(binSASLList, "", "", "", 2, 0),
		breq(binSASLAuth, "PLAIN", "", "\x00alice\x00wrong", 3, 0), breq(binSASLStep, "PLAIN", "", "x", 4, 0),
		breq(binSASLAuth, "PLAIN", "", "garbage", 5, 0), breq(binGet, "k", "", "", 6, 0),
	}, map[int]string{1: "memcached lists every mechanism of its SASL library; strata offers PLAIN"})
	// The right password and requests that need it, against a memcached
	// whose SASL library checks a sasldb holding alice's password
	// (Debian's memcached reads no plain password file; saslpasswd2, from
	// sasl2-bin, writes the sasldb).
	saslDir, err := os.MkdirTemp("", "strata-sasl") // readable by nobody, unlike t.TempDir's parent
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(saslDir) })
	os.Chmod(saslDir, 0o755)
	db := filepath.Join(saslDir, "sasldb2")
	pw := exec.Command("saslpasswd2", "-p", "-a", "memcached", "-c", "-f", db, "alice")
	pw.Stdin = strings.NewReader("secret")
	if out, err := pw.CombinedOutput(); err != nil {
		t.Fatalf("saslpasswd2 (Debian's sasl2-bin): %v\n%s", err, out)
	}
	os.Chmod(db, 0o644)
	if err := os.WriteFile(filepath.Join(saslDir, "memcached.conf"), []byte("mech_list: plain\nsasldb_path: "+db+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SASL_CONF_PATH", saslDir)
	os.Unsetenv("MEMCACHED_SASL_PWDB") // t.Setenv above restores it
	authSession(t, startAuthMemcached(t, "-S"), users, [][]byte{
		breq(binSASLAuth, "PLAIN", "", "\x00alice\x00secret", 1, 0), breq(binGet, "k", "", "", 2, 0),
		breq(binSASLAuth, "PLAIN", "", "\x00alice\x00wrong", 3, 0), breq(binGet, "k", "", "", 4, 0),
	}, nil)
	// The right password, then requests that need it, against strata
	// alone: the store's CAS values are its own.
	in := cat(breq(binSASLAuth, "PLAIN", "", "\x00alice\x00secret", 1, 0), breq(binSet, "k", setExt(0, 0), "v", 2, 0),
		breq(binGet, "k", "", "", 3, 0))
	got, closed := authRun(t, users, in)
	want := cat(breq(binSASLAuth, "", "", "Authenticated", 1, 0), breq(binSet, "", "", "", 2, 0),
		breq(binGet, "", "\x00\x00\x00\x00", "v", 3, 0))
	for off := 0; off < len(want); off += binHeaderLen + int(binary.BigEndian.Uint32(want[off+8:])) {
		want[off] = binResMagic
	}
	if got = clearBinCAS(got); closed || !bytes.Equal(got, want) {
		t.Errorf("authenticated session:\n got %x closed=%v\nwant %x", got, closed, want)
	}
}

// clearBinCAS zeroes the CAS of every response, for comparing a session
// whose CAS values are the store's own.
func clearBinCAS(out []byte) []byte {
	out = bytes.Clone(out)
	for off := 0; off+binHeaderLen <= len(out); off += binHeaderLen + int(binary.BigEndian.Uint32(out[off+8:])) {
		binary.BigEndian.PutUint64(out[off+16:], 0)
	}
	return out
}

// startAuthMemcached starts a memcached that requires authentication and
// returns its address once it accepts connections (its own readiness
// probe would need to authenticate).
func startAuthMemcached(t *testing.T, args ...string) string {
	t.Helper()
	bin := memcachedtest.Binary(t)
	port := memcachedtest.FreePort(t)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	args = append([]string{"-l", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "0", "-t", "1"}, args...)
	if os.Geteuid() == 0 {
		args = append(args, "-u", "nobody")
	}
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); <-tick.C {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return addr
		}
	}
	t.Fatalf("memcached %v did not listen on %s", args, addr)
	return ""
}

// fixedUser is an Authenticator with one account, for fuzzing.
type fixedUser struct{}

func (fixedUser) Check(user, pass []byte) bool { return string(user) == "u" && string(pass) == "p" }

// FuzzAuth runs the text and binary parsers of a connection that must
// authenticate over arbitrary bytes: the framing invariants hold, and no
// data command comes out before an attempt succeeded.
func FuzzAuth(f *testing.F) {
	for _, s := range [][]byte{
		[]byte("set a 0 0 3\r\nu p\r\nget k\r\n"), []byte("get k\r\nset a 0 0 3\r\nu x\r\n"), []byte("set a 0 0 99999\r\n"),
		[]byte("set a 0 0 2\r\nab\n\n"), []byte("set\r\n" + strings.Repeat("x", 1100)),
		cat(breq(binSASLList, "", "", "", 1, 0), breq(binSASLAuth, "PLAIN", "", "\x00u\x00p", 2, 0), breq(binGet, "k", "", "", 3, 0)),
		cat(breq(binSASLAuth, "PLAIN", "", "\x00u\x00x", 1, 0), breq(binGet, "k", "", "", 2, 0)),
		breq(binSASLAuth, strings.Repeat("M", 40), "", "x", 1, 0), breq(binSASLStep, "PLAIN", "", "\x00u\x00p", 1, 0),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, buf []byte) {
		p := NewParser(Limits{MaxItemSize: 4096, Auth: fixedUser{}})
		var cmd Command
		for i := 0; len(buf) > 0 && i < 1000; i++ {
			before := p.Authenticated()
			n, err := p.Parse(buf, &cmd)
			if n < 0 || n > len(buf) {
				t.Fatalf("n = %d of %d", n, len(buf))
			}
			if !before && len(cmd.Reqs) > 0 {
				t.Fatalf("%v with %d requests before authentication", cmd.Op, len(cmd.Reqs))
			}
			if err != nil || n == 0 {
				return
			}
			buf = buf[n:]
		}
	})
}
