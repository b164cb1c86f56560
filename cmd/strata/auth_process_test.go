package main

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/internal/testbin"
)

// [auth] in a running strata: a client must authenticate, and a SIGHUP
// re-reads the users file.
func TestAuthUsersFileAndSIGHUP(t *testing.T) {
	bin := testbin.BuildStrata(t)
	users := writeFile(t, "users", "alice:secret\n")
	p := startProcess(t, bin, writeFile(t, "strata.toml", "[auth]\nusers_file = \""+users+"\"\n"))
	try := func(creds string) string {
		c, err := net.DialTimeout("tcp", p.listen, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		r := bufio.NewReader(c)
		var got strings.Builder
		for _, req := range []string{"get k\r\n", "set a 0 0 " + strconv.Itoa(len(creds)) + "\r\n" + creds + "\r\n", "get k\r\n"} {
			if _, err := c.Write([]byte(req)); err != nil {
				t.Fatal(err)
			}
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			got.WriteString(line)
		}
		return got.String()
	}
	if got := try("alice secret"); got != "CLIENT_ERROR unauthenticated\r\nSTORED\r\nEND\r\n" {
		t.Fatalf("right password: %q", got)
	}
	if got := try("alice wrong"); got != "CLIENT_ERROR unauthenticated\r\nCLIENT_ERROR authentication failure\r\nCLIENT_ERROR unauthenticated\r\n" {
		t.Fatalf("wrong password: %q", got)
	}
	if strings.Contains(p.stderr.String(), "wrong") {
		t.Errorf("the log holds the password: %s", p.stderr.String())
	}
	rewrite(t, users, "alice:changed\n")
	p.signal(t, syscall.SIGHUP)
	poll.Until(t, 10*time.Second, "the new password to be accepted", func() bool {
		return strings.HasSuffix(try("alice changed"), "STORED\r\nEND\r\n")
	})
	if got := try("alice secret"); !strings.Contains(got, "authentication failure") {
		t.Fatalf("old password after SIGHUP: %q", got)
	}
}
