package embedded

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-cache/strata/tiers"
)

// snapStore is a store on a fake clock whose snapshot lives in a fresh
// directory.
func snapStore(t testing.TB, path string, clock *fakeClock, maxBytes int64) *Store {
	t.Helper()
	return newStore(t, Config{MaxBytes: maxBytes, Snapshot: path, Now: clock.Now})
}

type snapItem struct {
	value string
	flags uint32
	cas   uint64
	ttl   int64
}

func readItem(t *testing.T, s *Store, key string) (snapItem, bool) {
	t.Helper()
	res := do(s, tiers.Request{Kind: tiers.KindGet, Key: []byte(key), WantValue: true, WantCAS: true, WantFlags: true, WantTTL: true})
	if res.Status != tiers.StatusHit {
		return snapItem{}, false
	}
	return snapItem{value: string(res.Value), flags: res.ClientFlags, cas: res.CAS, ttl: res.TTL}, true
}

// TestSnapshotRoundTrip: what a restarted store serves is what the old one
// served (values, flags, CAS tokens, TTLs counted against the wall clock),
// minus what expired while it was down; its next CAS is new; the file is
// gone once loaded.
func TestSnapshotRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l2.snap")
	clock := newClock(clockStart)
	s := snapStore(t, path, clock, 64<<20)
	want := map[string]snapItem{}
	for i := range 1000 {
		key := fmt.Sprintf("k%d", i)
		req := setReq(key, strings.Repeat("v", i%300))
		req.ClientFlags = uint32(i * 7)
		switch i % 3 {
		case 1:
			req.TTL = 100 // survives the 60 s of downtime below
		case 2:
			req.TTL = 30 // expires while down
		}
		if res := do(s, req); res.Status != tiers.StatusStored {
			t.Fatalf("set %s: %v", key, res.Status)
		}
		if i%3 != 2 {
			it, _ := readItem(t, s, key)
			want[key] = it
		}
	}
	saved, err := s.Save()
	if err != nil || saved.Items != 1000 {
		t.Fatalf("Save = %+v, %v; want 1000 items", saved, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != saved.Bytes {
		t.Fatalf("file: %v, %v; Save said %d bytes", fi, err, saved.Bytes)
	}

	clock.advance(60)
	r := snapStore(t, path, clock, 64<<20)
	got, err := r.Restore()
	if err != nil {
		t.Fatal(err)
	}
	if got.Items != len(want) || got.Expired != 1000-len(want) || got.Skipped != 0 || got.Bytes != saved.Bytes {
		t.Fatalf("Restore = %+v, want %d items and %d expired", got, len(want), 1000-len(want))
	}
	for key, w := range want {
		g, ok := readItem(t, r, key)
		if w.ttl > 0 {
			w.ttl -= 60
		}
		if !ok || g != w {
			t.Fatalf("%s after restore: %+v (hit %v), want %+v", key, g, ok, w)
		}
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the snapshot is still there after the load: %v", err)
	}
	if res := do(r, setReq("new", "x")); res.CAS != s.cas.Load()+1 {
		t.Fatalf("first CAS after restore = %d, want %d", res.CAS, s.cas.Load()+1)
	}
	if again, err := r.Restore(); err == nil || again.Items != 0 {
		t.Fatalf("second Restore into a full store = %+v, %v; want an error", again, err)
	}
}

// TestSnapshotKeepsRecencyWhenSmaller: a store restarted with less memory
// keeps the most recently used items, because records come from each
// LRU's tail.
func TestSnapshotKeepsRecencyWhenSmaller(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l1.snap")
	clock := newClock(clockStart)
	s := newStore(t, Config{MaxBytes: 4 << 20, Shards: 1, Snapshot: path, Now: clock.Now})
	val := strings.Repeat("v", 1000)
	for i := range 2000 {
		do(s, setReq(fmt.Sprint(i), val))
	}
	do(s, getReq("0")) // the oldest becomes the most recent
	if _, err := s.Save(); err != nil {
		t.Fatal(err)
	}
	r := newStore(t, Config{MaxBytes: 2 << 20, Shards: 1, Snapshot: path, Now: clock.Now})
	if _, err := r.Restore(); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"0", "1999"} {
		if _, ok := readItem(t, r, key); !ok {
			t.Fatalf("%s, among the most recent, was evicted", key)
		}
	}
	if _, ok := readItem(t, r, "1"); ok {
		t.Fatal("1, the least recent, survived a restore into half the memory")
	}
}

func TestSnapshotMissingFileStartsEmpty(t *testing.T) {
	s := snapStore(t, filepath.Join(t.TempDir(), "none"), newClock(clockStart), 0)
	got, err := s.Restore()
	if err != nil || !got.Missing || s.Len() != 0 {
		t.Fatalf("Restore = %+v, %v; want Missing", got, err)
	}
}

// validSnapshot is a saved store of n small items, as bytes.
func validSnapshot(t testing.TB, n int) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "snap")
	s := snapStore(t, path, newClock(clockStart), 0)
	for i := range n {
		do(s, setReq(fmt.Sprintf("key%d", i), fmt.Sprintf("value%d", i)))
	}
	if _, err := s.Save(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSnapshotRefusesDamagedFiles: every damaged file is reported with its
// name and reason, moved aside, and leaves the store empty with its CAS
// counter at zero, whatever part of it was read.
func TestSnapshotRefusesDamagedFiles(t *testing.T) {
	good := validSnapshot(t, 50)
	with := func(off int, b byte) []byte {
		c := bytes.Clone(good)
		c[off] ^= b
		return c
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "empty file"},
		{"foreign", []byte("VALUE foo 0 3\r\nbar\r\nEND\r\n" + strings.Repeat("x", 64)), "not a strata snapshot"},
		{"header cut", good[:20], "header cut short"},
		{"future version", with(8, 2), "format version 3"},
		{"cut in a record", good[:len(good)/2], "cut short"},
		{"no end record", good[:len(good)-snapRecLen], "cut short"},
		{"value byte flipped", with(len(good)/2, 1), "checksum"},
		{"count wrong", with(24, 1), "records, header says"},
		{"checksum wrong", with(32, 1), "checksum"},
		{"bytes after the end", append(bytes.Clone(good), 0), "bytes follow the end record"},
		{"end record damaged", with(len(good)-1, 1), "end record"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "snap")
			if err := os.WriteFile(path, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			s := snapStore(t, path, newClock(clockStart), 0)
			got, err := s.Restore()
			if !errors.Is(err, ErrSnapshot) || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q from %s", err, tc.want, path)
			}
			if s.Len() != 0 || s.cas.Load() != 0 || s.Stats().Bytes != 0 {
				t.Fatalf("store after a refused load: %d items, CAS %d", s.Len(), s.cas.Load())
			}
			moved, _ := filepath.Glob(path + ".bad-*")
			if len(moved) != 1 || got.MovedTo != moved[0] {
				t.Fatalf("moved aside to %q, files %v", got.MovedTo, moved)
			}
			if b, _ := os.ReadFile(moved[0]); !bytes.Equal(b, tc.data) {
				t.Fatal("the file moved aside is not the one refused")
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Fatalf("%s is still in place", path)
			}
		})
	}
}

func TestSnapshotConfig(t *testing.T) {
	dir := t.TempDir()
	for _, bad := range []string{dir, filepath.Join(dir, "no", "such")} {
		var fe *FieldError
		if err := (Config{Snapshot: bad}).Validate(); !errors.As(err, &fe) || fe.Field != "Snapshot" {
			t.Errorf("Snapshot %q: %v, want a Snapshot FieldError", bad, err)
		}
	}
	if err := (Config{Snapshot: filepath.Join(dir, "ok")}).Validate(); err != nil {
		t.Error(err)
	}
}

// FuzzLoadSnapshot: no input crashes the loader or allocates beyond the
// store's item limit per record; an input it refuses leaves nothing once
// reset; an input it accepts saves back into a file that loads the same
// items.
func FuzzLoadSnapshot(f *testing.F) {
	good := validSnapshot(f, 3)
	f.Add(good)                           // a valid file
	f.Add(good[:len(good)-1])             // cut short
	f.Add([]byte(snapMagic))              // header only in part
	f.Add(validSnapshot(f, 0))            // no items
	f.Add(append([]byte{}, good[:40]...)) // header alone
	f.Fuzz(func(t *testing.T, data []byte) {
		s := newStore(t, Config{MaxBytes: 64 << 10, MaxItemSize: 1024, Now: newClock(clockStart).Now})
		got, err := s.load(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrSnapshot) {
				t.Fatalf("error %v does not wrap ErrSnapshot", err)
			}
			s.reset()
			if s.Len() != 0 || s.Stats().Bytes != 0 {
				t.Fatal("reset left items")
			}
			return
		}
		path := filepath.Join(t.TempDir(), "again")
		s.snapshot = path
		saved, err := s.Save()
		if err != nil || saved.Items != s.Len() {
			t.Fatalf("Save of a loaded store = %+v, %v; holds %d", saved, err, s.Len())
		}
		r := newStore(t, Config{MaxBytes: 64 << 10, MaxItemSize: 1024, Snapshot: path, Now: newClock(clockStart).Now})
		again, err := r.Restore()
		if err != nil || again.Items != s.Len() || r.Len() != s.Len() {
			t.Fatalf("reload = %+v, %v; want %d items (first load %+v)", again, err, s.Len(), got)
		}
	})
}
