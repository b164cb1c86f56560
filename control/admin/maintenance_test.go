package admin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// tierMap is a two-server tier whose server b is in state st with shards,
// and moves batches in flight.
func tierMap(st string, shards, replicas, moves int) ShardMap {
	return ShardMap{MovesInFlight: moves, Servers: []ShardServer{
		{Addr: "a:1", State: "up", Shards: 100},
		{Addr: "b:1", State: st, Shards: shards, Replicas: replicas},
	}}
}

func TestMaintStep(t *testing.T) {
	const old, restarted = 100, 200 // process ids before and after the restart
	cases := []struct {
		name string
		p    maintPhase
		m    ShardMap
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
		{"emptied and stopped between two looks", mEmptying, tierMap("draining", 0, 0, 0), restarted, mAwaitBack, actWait, "holds nothing, and was stopped"},
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
	maps  []ShardMap
	pids  []int
	reads int
	sent  []string
}

func (s *scripted) ShardMap(context.Context, string) (ShardMap, error) {
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

func (s *scripted) SetDrain(_ context.Context, _, addr string, drain bool) error {
	s.sent = append(s.sent, fmt.Sprintf("drain %s %v", addr, drain))
	return nil
}

func (s *scripted) SetMaintenance(_ context.Context, _, addr string, on bool) error {
	s.sent = append(s.sent, fmt.Sprintf("maintenance %s %v", addr, on))
	return nil
}

func (s *scripted) SetConvertPaused(context.Context, string, bool) error { return nil }

func TestMaintenanceWalksOneServer(t *testing.T) {
	s := &scripted{maps: []ShardMap{
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
	show := func(_ maintPhase, line string) {
		if line != "" {
			out.WriteString(line + "\n")
		}
	}
	if err := maintain(context.Background(), s, s.pid, "l2", "b:1", time.Millisecond, show); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.sent, ", "); got != "maintenance b:1 true, drain b:1 true, drain b:1 false, maintenance b:1 false" {
		t.Fatalf("requests %q", got)
	}
	for _, want := range []string{"holds nothing", "stopped;", "back (process 200)", "done"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestMaintainGivesUp(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	s := &scripted{maps: []ShardMap{tierMap("draining", 5, 0, 1)}} // never empties
	if err := maintain(ctx, s, s.pid, "l2", "b:1", time.Millisecond, func(maintPhase, string) {}); err == nil || !strings.Contains(err.Error(), "emptying") {
		t.Errorf("a drain that never ends: %v", err)
	}
	// Its context over, the walk still removes the mark.
	if got := strings.Join(s.sent, ", "); got != "maintenance b:1 true, drain b:1 true, maintenance b:1 false" {
		t.Errorf("requests %q", got)
	}
}

func TestWalkOf(t *testing.T) {
	two := tierMap("up", 50, 0, 0)
	if got, err := walkOf(two, "", true); err != nil || strings.Join(got, " ") != "a:1 b:1" {
		t.Errorf("all of two up: %v %v", got, err)
	}
	if got, err := walkOf(two, "b:1", false); err != nil || len(got) != 1 {
		t.Errorf("one: %v %v", got, err)
	}
	for _, c := range []struct {
		name  string
		m     ShardMap
		addr  string
		all   bool
		field string
	}{
		{"not in the map", two, "c:1", false, "addr"},
		{"one draining", tierMap("draining", 1, 0, 0), "", true, "all"},
		{"a pool of one", ShardMap{Servers: []ShardServer{{Addr: "a:1", State: "up"}}}, "", true, "all"},
	} {
		var fe *FieldError
		if _, err := walkOf(c.m, c.addr, c.all); !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: %v, want a refusal of %s", c.name, err, c.field)
		}
	}
}
