package driver

import (
	"bufio"
	"errors"
	"strings"
	"testing"

	"github.com/strata-cache/strata/bench/workload"
)

func TestAppendRequest(t *testing.T) {
	cases := []struct {
		r    workload.Request
		want string
	}{
		{workload.Request{Op: workload.OpGet, Key: []byte("a:1")}, "get a:1\r\n"},
		{workload.Request{Op: workload.OpGets, Key: []byte("a:1")}, "gets a:1\r\n"},
		{workload.Request{Op: workload.OpMetaGet, Key: []byte("a:1")}, "mg a:1 v\r\n"},
		{workload.Request{Op: workload.OpDelete, Key: []byte("a:1")}, "delete a:1\r\n"},
		{workload.Request{Op: workload.OpSet, Key: []byte("a:1"), ValueSize: 5, TTL: 60}, "set a:1 0 60 5\r\nstrat\r\n"},
		{workload.Request{Op: workload.OpSet, Key: []byte("e"), ValueSize: 0}, "set e 0 0 0\r\n\r\n"},
	}
	for _, c := range cases {
		if got := string(appendRequest(nil, &c.r)); got != c.want {
			t.Errorf("%v: %q, want %q", c.r.Op, got, c.want)
		}
	}
}

func TestReadReply(t *testing.T) {
	get := &workload.Request{Op: workload.OpGet, Key: []byte("k"), ValueSize: 3}
	gets := &workload.Request{Op: workload.OpGets, Key: []byte("k"), ValueSize: 3}
	mg := &workload.Request{Op: workload.OpMetaGet, Key: []byte("k"), ValueSize: 3}
	set := &workload.Request{Op: workload.OpSet, Key: []byte("k"), ValueSize: 3}
	del := &workload.Request{Op: workload.OpDelete, Key: []byte("k")}
	cases := []struct {
		name    string
		r       *workload.Request
		in      string
		out     outcome
		badSize bool
		proto   bool
	}{
		{"get hit", get, "VALUE k 0 3\r\nabc\r\nEND\r\n", outHit, false, false},
		{"get hit wrong size", get, "VALUE k 7 4\r\nabcd\r\nEND\r\n", outHit, true, false},
		{"get miss", get, "END\r\n", outMiss, false, false},
		{"gets hit", gets, "VALUE k 0 3 99\r\nabc\r\nEND\r\n", outHit, false, false},
		{"gets without cas", gets, "VALUE k 0 3\r\nabc\r\nEND\r\n", 0, false, true},
		{"value of another key", get, "VALUE j 0 3\r\nabc\r\nEND\r\n", 0, false, true},
		{"value block too long", get, "VALUE k 0 3\r\nabcd\r\nEND\r\n", 0, false, true},
		{"two values for one key", get, "VALUE k 0 3\r\nabc\r\nVALUE k 0 3\r\nabc\r\nEND\r\n", 0, false, true},
		{"mg hit", mg, "VA 3\r\nabc\r\n", outHit, false, false},
		{"mg hit with flags", mg, "VA 2 f0\r\nab\r\n", outHit, true, false},
		{"mg miss", mg, "EN\r\n", outMiss, false, false},
		{"set stored", set, "STORED\r\n", outStored, false, false},
		{"set not stored", set, "NOT_STORED\r\n", outNotStored, false, false},
		{"delete", del, "DELETED\r\n", outDeleted, false, false},
		{"delete miss", del, "NOT_FOUND\r\n", outNotFound, false, false},
		{"server error", get, "SERVER_ERROR out of memory\r\n", outError, false, false},
		{"client error", set, "CLIENT_ERROR bad data chunk\r\n", outError, false, false},
		{"error", del, "ERROR\r\n", outError, false, false},
		{"stray line", set, "DELETED\r\n", 0, false, true},
	}
	for _, c := range cases {
		br := bufio.NewReader(strings.NewReader(c.in))
		out, info, err := readReply(br, c.r)
		if c.proto {
			if !errors.Is(err, ErrProtocol) {
				t.Errorf("%s: got %v, %v; want a protocol error", c.name, out, err)
			}
			continue
		}
		if err != nil || out != c.out || info.badSize != c.badSize {
			t.Errorf("%s: got %v badSize=%v err=%v; want %v badSize=%v", c.name, out, info.badSize, err, c.out, c.badSize)
		}
		if rest, _ := br.Peek(1); len(rest) != 0 {
			t.Errorf("%s: %q left unread", c.name, rest)
		}
	}
}

// The open-loop timetable interleaves connections into one even stream.
func TestSchedule(t *testing.T) {
	const conns, rate = 3, 1000.0 // one request per millisecond overall
	var all []int64
	for i := 0; i < conns; i++ {
		s := newSchedule(i, conns, rate)
		for j := int64(0); j < 5; j++ {
			all = append(all, s.at(j))
			if got := s.dueBy(s.at(j)); got != j+1 {
				t.Errorf("conn %d: dueBy(at(%d)) = %d, want %d", i, j, got, j+1)
			}
			if got := s.dueBy(s.at(j) - 1); got != j {
				t.Errorf("conn %d: dueBy(at(%d)-1) = %d, want %d", i, j, got, j)
			}
		}
	}
	seen := map[int64]bool{}
	for _, v := range all {
		if v%1_000_000 != 0 || seen[v] || v >= 15_000_000 {
			t.Fatalf("times %v are not the 15 distinct millisecond slots", all)
		}
		seen[v] = true
	}
}
