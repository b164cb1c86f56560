package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/poll"
)

// simTier is a managed tier of servers that answer a drain by emptying
// and are restarted by the operator one look after they are empty; they
// take shards back on an undrain. It records the order of events. Safe
// for the walk's goroutine and the test's.
type simTier struct {
	mu     sync.Mutex // guards every field
	state  map[string]string
	pids   map[string]int
	events []string
	hold   bool // servers stay draining with shards: a walk that never ends
}

func newSimTier(addrs ...string) *simTier {
	s := &simTier{state: map[string]string{}, pids: map[string]int{}}
	for i, a := range addrs {
		s.state[a], s.pids[a] = "up", i+1
	}
	return s
}

func (s *simTier) ShardMap(_ context.Context, tier string) (ShardMap, error) {
	if tier != "l2" {
		return ShardMap{}, &FieldError{Field: "tier", Err: fmt.Errorf("%q is not a managed tier", tier)}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var m ShardMap
	for _, a := range []string{"a:1", "b:1"} {
		st, shown, shards := s.state[a], "draining", 0
		switch {
		case st == "up":
			shown, shards = "up", 50
		case s.hold:
			shards = 5
		case st == "empty": // the walk sees it empty; the operator stops it next
			s.state[a] = "empty-seen"
		case st == "empty-seen":
			s.state[a], s.pids[a] = "stopped", 0
			s.events = append(s.events, "stop "+a)
		case st == "stopped":
			s.state[a], s.pids[a] = "back", s.pids[a]+1000
			s.events = append(s.events, "start "+a)
			shown = "down"
		}
		m.Servers = append(m.Servers, ShardServer{Addr: a, State: shown, Shards: shards})
	}
	return m, nil
}

func (s *simTier) pid(_ context.Context, addr string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pids[addr]
}

func (s *simTier) SetDrain(_ context.Context, _, addr string, drain bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if drain {
		s.state[addr] = "empty"
	} else {
		s.state[addr] = "up"
	}
	s.events = append(s.events, fmt.Sprintf("drain %s %v", addr, drain))
	return nil
}

func (s *simTier) SetMaintenance(_ context.Context, _, addr string, on bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, fmt.Sprintf("maintenance %s %v", addr, on))
	return nil
}

func (s *simTier) SetConvertPaused(context.Context, string, bool) error { return nil }

func (s *simTier) eventList() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.events, ", ")
}

func startMaintServer(t *testing.T, sim *simTier) *Server {
	t.Helper()
	s, err := New(Config{Listen: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Deps{Shards: sim, ServerPID: sim.pid})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	return s
}

func maintStatus(t *testing.T, r reply) MaintenanceStatus {
	t.Helper()
	var st MaintenanceStatus
	if err := json.Unmarshal(r.body, &st); err != nil {
		t.Fatalf("%d %s: %v", r.code, r.body, err)
	}
	return st
}

// The whole pool, one server at a time, through the API.
func TestMaintenanceAPIWalksAll(t *testing.T) {
	sim := newSimTier("a:1", "b:1")
	s := startMaintServer(t, sim)
	r := do(t, s, "POST", "/admin/v1/servers/maintenance", "", `{"tier":"l2","all":true,"interval":"1ms"}`)
	if r.code != 202 {
		t.Fatalf("POST: %d %s", r.code, r.body)
	}
	if st := maintStatus(t, r); !st.Running || strings.Join(st.Servers, " ") != "a:1 b:1" {
		t.Fatalf("status at start: %+v", st)
	}
	var st MaintenanceStatus
	poll.Until(t, 5*time.Second, "the walk ends", func() bool {
		st = maintStatus(t, do(t, s, "GET", "/admin/v1/servers/maintenance", "", ""))
		return !st.Running
	})
	// Each server is marked under maintenance from before its drain to
	// after its return, for the leader's longer handoff.
	want := "maintenance a:1 true, drain a:1 true, stop a:1, start a:1, drain a:1 false, maintenance a:1 false, " +
		"maintenance b:1 true, drain b:1 true, stop b:1, start b:1, drain b:1 false, maintenance b:1 false"
	if got := sim.eventList(); got != want {
		t.Fatalf("events\n %s\nwant\n %s", got, want)
	}
	var lines []string
	for _, n := range st.Notes {
		lines = append(lines, n.Line)
	}
	out := strings.Join(lines, "\n")
	if st.Error != "" || st.Step != "done" || st.Addr != "b:1" || st.Server != 1 ||
		!strings.Contains(out, "server 2 of 2") || !strings.Contains(out, "a:1: back (process 1000)") {
		t.Errorf("status %+v\n%s", st, out)
	}
}

func TestMaintenanceAPIRefuses(t *testing.T) {
	sim := newSimTier("a:1", "b:1")
	s := startMaintServer(t, sim)
	for _, c := range []struct {
		body  string
		code  int
		field string
	}{
		{`{"addr":"a:1"}`, 400, "tier"},
		{`{"tier":"l2"}`, 400, "addr"},
		{`{"tier":"l2","addr":"a:1","all":true}`, 400, "addr"},
		{`{"tier":"l2","addr":"a:1","interval":"2h"}`, 400, "interval"},
		{`{"tier":"l2","addr":"a:1","colour":"red"}`, 400, ""},
		{`{"tier":"l9","addr":"a:1"}`, 404, "tier"},
		{`{"tier":"l2","addr":"c:1"}`, 400, "addr"},
	} {
		r := do(t, s, "POST", "/admin/v1/servers/maintenance", "", c.body)
		if r.code != c.code || (c.field != "" && r.json(t)["field"] != c.field) {
			t.Errorf("%s: %d %s, want %d on %q", c.body, r.code, r.body, c.code, c.field)
		}
	}
	sim.mu.Lock()
	sim.pids["a:1"] = 0 // does not answer: its restart could not be seen
	sim.mu.Unlock()
	if r := do(t, s, "POST", "/admin/v1/servers/maintenance", "", `{"tier":"l2","addr":"a:1"}`); r.code != 409 {
		t.Errorf("a server that does not answer: %d %s", r.code, r.body)
	}
	if got := sim.eventList(); got != "" {
		t.Errorf("a refused request changed the tier: %s", got)
	}
}

// A second walk is refused while one runs; a cancelled one stops where it
// stands, and says so.
func TestMaintenanceAPIBusyAndCancel(t *testing.T) {
	sim := newSimTier("a:1", "b:1")
	sim.hold = true
	s := startMaintServer(t, sim)
	if r := do(t, s, "POST", "/admin/v1/servers/maintenance", "", `{"tier":"l2","addr":"a:1","interval":"1ms"}`); r.code != 202 {
		t.Fatalf("POST: %d %s", r.code, r.body)
	}
	poll.Until(t, 5*time.Second, "the walk emptying a:1", func() bool {
		return maintStatus(t, do(t, s, "GET", "/admin/v1/servers/maintenance", "", "")).Step == "emptying"
	})
	if r := do(t, s, "POST", "/admin/v1/servers/maintenance", "", `{"tier":"l2","addr":"b:1"}`); r.code != 409 {
		t.Errorf("a second walk: %d %s", r.code, r.body)
	}
	r := do(t, s, "DELETE", "/admin/v1/servers/maintenance", "", "")
	st := maintStatus(t, r)
	if r.code != 200 || st.Running || !strings.Contains(st.Error, "not finished (emptying)") {
		t.Errorf("DELETE: %d %+v", r.code, st)
	}
	// Cancelled, the walk leaves a:1 drained but removes its mark.
	if got := sim.eventList(); got != "maintenance a:1 true, drain a:1 true, maintenance a:1 false" {
		t.Errorf("events %s", got)
	}
}
