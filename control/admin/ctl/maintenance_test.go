package ctl

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/admin"
)

// tierMap is a two-server tier whose server b is in state st with shards,
// and moves batches in flight.
func tierMap(st string, shards, replicas, moves int) admin.ShardMap {
	return admin.ShardMap{MovesInFlight: moves, Servers: []admin.ShardServer{
		{Addr: "a:1", State: "up", Shards: 100},
		{Addr: "b:1", State: st, Shards: shards, Replicas: replicas},
	}}
}

func TestMaintStep(t *testing.T) {
	const old, restarted = 100, 200 // process ids before and after the restart
	cases := []struct {
		name string
		p    maintPhase
		m    admin.ShardMap
		pid  int
		want maintPhase
		act  maintAction
		note string // a substring of the note, "" for none
	}{
		{"starts by draining", mDrain, tierMap("up", 50, 0, 0), old, mEmptying, actDrain, "draining (50 shards)"},
		{"still owns shards", mEmptying, tierMap("draining", 3, 0, 1), old, mEmptying, actWait, ""},
		{"owns none, a batch in flight", mEmptying, tierMap("draining", 0, 0, 1), old, mEmptying, actWait, ""},
		{"owns none, still a replica", mEmptying, tierMap("draining", 0, 2, 0), old, mEmptying, actWait, ""},
		{"empty", mEmptying, tierMap("draining", 0, 0, 0), old, mAwaitDown, actWait, "holds nothing; restart it now"},
		{"stopped before empty", mEmptying, tierMap("draining", 9, 0, 0), 0, mAwaitBack, actWait, "stopped before it was empty"},
		{"not stopped yet", mAwaitDown, tierMap("draining", 0, 0, 0), old, mAwaitDown, actWait, ""},
		{"stopped", mAwaitDown, tierMap("draining", 0, 0, 0), 0, mAwaitBack, actWait, "stopped;"},
		{"restarted between two looks", mAwaitDown, tierMap("draining", 0, 0, 0), restarted, mAwaitBack, actWait, "stopped;"},
		{"still stopped", mAwaitBack, tierMap("down", 0, 0, 0), 0, mAwaitBack, actWait, ""},
		{"back", mAwaitBack, tierMap("draining", 0, 0, 0), restarted, mUndrain, actWait, "back (process 200)"},
		{"undrain", mUndrain, tierMap("draining", 0, 0, 0), restarted, mReturning, actUndrain, "undraining"},
		{"flushed, not yet given shards", mReturning, tierMap("up", 0, 0, 0), restarted, mReturning, actWait, ""},
		{"shards coming back", mReturning, tierMap("up", 20, 0, 1), restarted, mReturning, actWait, ""},
		{"returned", mReturning, tierMap("up", 50, 0, 0), restarted, mDone, actWait, "up with 50 shards; done"},
	}
	for _, c := range cases {
		st, act, note, err := maintStep(maintState{phase: c.p, pid: old}, c.m, "b:1", c.pid)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if st.phase != c.want || act != c.act || (c.note == "") != (note == "") || !strings.Contains(note, c.note) {
			t.Errorf("%s: got %s %d %q, want %s %d %q", c.name, st.phase, act, note, c.want, c.act, c.note)
		}
	}
	if st, _, _, _ := maintStep(maintState{phase: mDrain}, tierMap("up", 1, 0, 0), "b:1", 7); st.pid != 7 {
		t.Errorf("the drain did not record the process id: %+v", st)
	}
	if _, _, _, err := maintStep(maintState{phase: mEmptying}, tierMap("up", 1, 0, 0), "c:1", old); err == nil {
		t.Error("a server not in the map was not refused")
	}
	if _, _, _, err := maintStep(maintState{phase: mDrain}, tierMap("up", 1, 0, 0), "b:1", 0); err == nil {
		t.Error("a server that does not answer was drained")
	}
}

// scripted plays a tier through a rolling restart: each SetDrain is
// recorded, and each ShardMap read moves b one step further, its process
// id with it.
type scripted struct {
	maps  []admin.ShardMap
	pids  []int
	reads int
	sent  []string
}

func (s *scripted) ShardMap(context.Context, string) (admin.ShardMap, error) {
	m := s.maps[min(s.reads, len(s.maps)-1)]
	s.reads++
	return m, nil
}

func (s *scripted) pid(context.Context, string) int {
	if len(s.pids) == 0 {
		return 100
	}
	return s.pids[min(s.reads-1, len(s.pids)-1)]
}

func (s *scripted) SetDrain(_ context.Context, _, addr string, drain bool) (admin.ShardMap, error) {
	s.sent = append(s.sent, fmt.Sprintf("drain %s %v", addr, drain))
	return admin.ShardMap{}, nil
}

func TestMaintenanceWalksOneServer(t *testing.T) {
	s := &scripted{maps: []admin.ShardMap{
		tierMap("up", 50, 0, 0),
		tierMap("draining", 10, 0, 1),
		tierMap("draining", 0, 0, 0),
		tierMap("draining", 0, 0, 0),
		tierMap("down", 0, 0, 0),
		tierMap("returning", 0, 0, 0),
		tierMap("returning", 0, 0, 0),
		tierMap("up", 30, 0, 1),
		tierMap("up", 50, 0, 0),
	}, pids: []int{100, 100, 100, 0, 0, 200}}
	var out strings.Builder
	if err := runMaintenance(context.Background(), s, s.pid, []string{"--interval", "1ms", "l2", "b:1"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.sent, ", "); got != "drain b:1 true, drain b:1 false" {
		t.Fatalf("requests %q", got)
	}
	for _, want := range []string{"holds nothing", "stopped;", "back (process 200)", "done"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestMaintenanceRefuses(t *testing.T) {
	s := &scripted{maps: []admin.ShardMap{tierMap("draining", 1, 0, 0)}}
	for _, args := range [][]string{{"l2"}, {"--all", "l2", "b:1"}, {"l2", "b:1", "c:1"}} {
		if err := runMaintenance(context.Background(), s, s.pid, args, io.Discard, io.Discard); err == nil || !strings.HasPrefix(err.Error(), "usage") {
			t.Errorf("%q: %v", args, err)
		}
	}
	if err := runMaintenance(context.Background(), s, s.pid, []string{"--all", "l2"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "all up") {
		t.Errorf("--all over a server not up: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	s = &scripted{maps: []admin.ShardMap{tierMap("draining", 5, 0, 1)}} // never empties
	if err := runMaintenance(ctx, s, s.pid, []string{"--interval", "1ms", "l2", "b:1"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "emptying") {
		t.Errorf("a drain that never ends: %v", err)
	}
}

// sim is a tier whose servers answer a drain by emptying and are
// restarted by the operator one look after they are empty; they take
// shards back on an undrain. It records the order of events.
type sim struct {
	state  map[string]string
	pids   map[string]int
	events []string
}

func (s *sim) ShardMap(context.Context, string) (admin.ShardMap, error) {
	var m admin.ShardMap
	for _, a := range []string{"a:1", "b:1"} {
		st, shown, shards := s.state[a], "draining", 0
		switch st {
		case "up":
			shown, shards = "up", 50
		case "empty": // the walk sees it empty; the operator stops it next
			s.state[a] = "empty-seen"
		case "empty-seen":
			s.state[a], s.pids[a] = "stopped", 0
			s.events = append(s.events, "stop "+a)
		case "stopped":
			s.state[a], s.pids[a] = "back", s.pids[a]+1000
			s.events = append(s.events, "start "+a)
			shown = "down"
		}
		m.Servers = append(m.Servers, admin.ShardServer{Addr: a, State: shown, Shards: shards})
	}
	return m, nil
}

func (s *sim) pid(_ context.Context, addr string) int { return s.pids[addr] }

func (s *sim) SetDrain(_ context.Context, _, addr string, drain bool) (admin.ShardMap, error) {
	if drain {
		s.state[addr] = "empty"
	} else {
		s.state[addr] = "up"
	}
	s.events = append(s.events, fmt.Sprintf("drain %s %v", addr, drain))
	return admin.ShardMap{}, nil
}

func TestMaintenanceAllOneServerAtATime(t *testing.T) {
	s := &sim{state: map[string]string{"a:1": "up", "b:1": "up"}, pids: map[string]int{"a:1": 1, "b:1": 2}}
	var out strings.Builder
	if err := runMaintenance(context.Background(), s, s.pid, []string{"--all", "--interval", "1ms", "l2"}, &out, io.Discard); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := "drain a:1 true, stop a:1, start a:1, drain a:1 false, drain b:1 true, stop b:1, start b:1, drain b:1 false"
	if got := strings.Join(s.events, ", "); got != want {
		t.Fatalf("events\n %s\nwant\n %s", got, want)
	}
	if !strings.Contains(out.String(), "server 2 of 2") || !strings.Contains(out.String(), "a:1: back (process 1000)") {
		t.Errorf("output:\n%s", out.String())
	}
}
