package auth

import (
	"bytes"
	"crypto/subtle"
	"fmt"
	"io"
	"os"
	"sync/atomic"
)

// maxUsersFile bounds what Load reads: a users file is a few lines, and a
// mistaken path (a log, a device) must not be read whole.
const maxUsersFile = 1 << 20

// Users is the accounts of a users file and the counters of the attempts
// made against them. Its methods are safe for concurrent use.
type Users struct {
	cfg      Config
	accounts atomic.Pointer[map[string][]byte] // swapped whole by Reload
	attempts atomic.Uint64
	failures atomic.Uint64
}

// New loads cfg.UsersFile. It fails when the Config requires nothing, or
// the file cannot be read or parsed.
func New(cfg Config) (*Users, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !cfg.Enabled() {
		return nil, errNoFile
	}
	u := &Users{cfg: cfg.filled()}
	if err := u.Reload(); err != nil {
		return nil, err
	}
	return u, nil
}

// Config returns the configuration in force, defaults filled in.
func (u *Users) Config() Config { return u.cfg }

// Reload re-reads the users file. On an error the accounts in force stay.
func (u *Users) Reload() error {
	f, err := os.Open(u.cfg.UsersFile)
	if err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxUsersFile+1))
	if err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	if len(data) > maxUsersFile {
		return fmt.Errorf("auth: %s is over %d bytes", u.cfg.UsersFile, maxUsersFile)
	}
	accounts, err := ParseUsers(data)
	if err != nil {
		return fmt.Errorf("auth: %s: %w", u.cfg.UsersFile, err)
	}
	u.accounts.Store(&accounts)
	return nil
}

// ParseUsers reads memcached's -Y format: "user:password" lines, the
// password being everything after the first colon up to the end of the
// line (a trailing \r is dropped), blank lines skipped. A line with no
// colon or an empty user is refused by number; the error never quotes a
// line, since it may hold a password.
func ParseUsers(data []byte) (map[string][]byte, error) {
	accounts := map[string][]byte{}
	for i := 1; len(data) > 0; i++ {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		data = rest
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 {
			continue
		}
		user, pass, ok := bytes.Cut(line, []byte(":"))
		if !ok || len(user) == 0 {
			return nil, fmt.Errorf("line %d is not user:password", i)
		}
		accounts[string(user)] = bytes.Clone(pass)
	}
	if len(accounts) == 0 {
		return nil, fmt.Errorf("no user:password line")
	}
	return accounts, nil
}

// Check reports whether pass is user's password, and counts the attempt.
// The comparison takes the same time wherever the passwords differ.
func (u *Users) Check(user, pass []byte) bool {
	u.attempts.Add(1)
	want, ok := (*u.accounts.Load())[string(user)]
	if !ok {
		want = pass // compare anyway, so an absent user costs the same
	}
	if subtle.ConstantTimeCompare(want, pass) != 1 || !ok {
		u.failures.Add(1)
		return false
	}
	return true
}

// Counts returns the attempts checked and how many failed.
func (u *Users) Counts() (attempts, failures uint64) {
	return u.attempts.Load(), u.failures.Load()
}
