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
	cases := []struct {
		name string
		p    maintPhase
		m    admin.ShardMap
		want maintPhase
		act  maintAction
		note string // a substring of the note, "" for none
	}{
		{"starts by draining", mDrain, tierMap("up", 50, 0, 0), mEmptying, actDrain, "draining (50 shards)"},
		{"still owns shards", mEmptying, tierMap("draining", 3, 0, 1), mEmptying, actWait, ""},
		{"owns none, a batch in flight", mEmptying, tierMap("draining", 0, 0, 1), mEmptying, actWait, ""},
		{"owns none, still a replica", mEmptying, tierMap("draining", 0, 2, 0), mEmptying, actWait, ""},
		{"empty", mEmptying, tierMap("draining", 0, 0, 0), mAwaitDown, actWait, "holds nothing; restart it now"},
		{"stopped before empty", mEmptying, tierMap("down", 0, 0, 0), mAwaitBack, actWait, "down before it was empty"},
		{"not stopped yet", mAwaitDown, tierMap("draining", 0, 0, 0), mAwaitDown, actWait, ""},
		{"stopped", mAwaitDown, tierMap("down", 0, 0, 0), mAwaitBack, actWait, "down;"},
		{"still down", mAwaitBack, tierMap("down", 0, 0, 0), mAwaitBack, actWait, ""},
		{"back, still marked draining", mAwaitBack, tierMap("draining", 0, 0, 0), mUndrain, actWait, "back (draining)"},
		{"back, returning", mAwaitBack, tierMap("returning", 0, 0, 0), mUndrain, actWait, "back (returning)"},
		{"undrain", mUndrain, tierMap("draining", 0, 0, 0), mReturning, actUndrain, "undraining"},
		{"flushed, not yet given shards", mReturning, tierMap("up", 0, 0, 0), mReturning, actWait, ""},
		{"shards coming back", mReturning, tierMap("up", 20, 0, 1), mReturning, actWait, ""},
		{"returned", mReturning, tierMap("up", 50, 0, 0), mDone, actWait, "up with 50 shards; done"},
	}
	for _, c := range cases {
		p, act, note, err := maintStep(c.p, c.m, "b:1")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if p != c.want || act != c.act || (c.note == "") != (note == "") || !strings.Contains(note, c.note) {
			t.Errorf("%s: got %s %d %q, want %s %d %q", c.name, p, act, note, c.want, c.act, c.note)
		}
	}
	if _, _, _, err := maintStep(mEmptying, tierMap("up", 1, 0, 0), "c:1"); err == nil {
		t.Error("a server not in the map was not refused")
	}
}

// scripted plays a tier through a rolling restart: each SetDrain is
// recorded, and each ShardMap read moves b one state further.
type scripted struct {
	maps  []admin.ShardMap
	reads int
	sent  []string
}

func (s *scripted) ShardMap(context.Context, string) (admin.ShardMap, error) {
	m := s.maps[min(s.reads, len(s.maps)-1)]
	s.reads++
	return m, nil
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
		tierMap("down", 0, 0, 0),
		tierMap("returning", 0, 0, 0),
		tierMap("up", 30, 0, 1),
		tierMap("up", 50, 0, 0),
	}}
	var out strings.Builder
	if err := runMaintenance(context.Background(), s, []string{"--interval", "1ms", "l2", "b:1"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.sent, ", "); got != "drain b:1 true, drain b:1 false" {
		t.Fatalf("requests %q", got)
	}
	for _, want := range []string{"holds nothing", "down;", "back (returning)", "done"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestMaintenanceRefuses(t *testing.T) {
	for _, args := range [][]string{{"l2"}, {"--all", "l2", "b:1"}, {"l2", "b:1", "c:1"}} {
		if err := runMaintenance(context.Background(), &scripted{}, args, io.Discard, io.Discard); err == nil || !strings.HasPrefix(err.Error(), "usage") {
			t.Errorf("%q: %v", args, err)
		}
	}
	s := &scripted{maps: []admin.ShardMap{tierMap("draining", 1, 0, 0)}}
	if err := runMaintenance(context.Background(), s, []string{"--all", "l2"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "all up") {
		t.Errorf("--all over a server not up: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	s = &scripted{maps: []admin.ShardMap{tierMap("draining", 5, 0, 1)}} // never empties
	if err := runMaintenance(ctx, s, []string{"--interval", "1ms", "l2", "b:1"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "emptying") {
		t.Errorf("a drain that never ends: %v", err)
	}
}

// sim is a tier whose servers answer a drain by emptying, are restarted
// (down for one read) as soon as they are empty, and take shards back on
// an undrain. It records the order of events.
type sim struct {
	state  map[string]string
	events []string
}

func (s *sim) ShardMap(context.Context, string) (admin.ShardMap, error) {
	var m admin.ShardMap
	for _, a := range []string{"a:1", "b:1"} {
		st := s.state[a]
		shards := 50
		if st != "up" {
			shards = 0
		}
		m.Servers = append(m.Servers, admin.ShardServer{Addr: a, State: st, Shards: shards})
		// The operator's side: an empty drained server is restarted.
		switch st {
		case "draining-empty":
			s.state[a] = "down"
			s.events = append(s.events, "stop "+a)
			m.Servers[len(m.Servers)-1].State = "draining"
		case "down":
			s.state[a] = "back"
			s.events = append(s.events, "start "+a)
		case "back":
			m.Servers[len(m.Servers)-1].State = "draining"
		}
	}
	return m, nil
}

func (s *sim) SetDrain(_ context.Context, _, addr string, drain bool) (admin.ShardMap, error) {
	if drain {
		s.state[addr] = "draining-empty"
	} else {
		s.state[addr] = "up"
	}
	s.events = append(s.events, fmt.Sprintf("drain %s %v", addr, drain))
	return admin.ShardMap{}, nil
}

func TestMaintenanceAllOneServerAtATime(t *testing.T) {
	s := &sim{state: map[string]string{"a:1": "up", "b:1": "up"}}
	var out strings.Builder
	if err := runMaintenance(context.Background(), s, []string{"--all", "--interval", "1ms", "l2"}, &out, io.Discard); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := "drain a:1 true, stop a:1, start a:1, drain a:1 false, drain b:1 true, stop b:1, start b:1, drain b:1 false"
	if got := strings.Join(s.events, ", "); got != want {
		t.Fatalf("events\n %s\nwant\n %s", got, want)
	}
	if !strings.Contains(out.String(), "server 2 of 2") {
		t.Errorf("output:\n%s", out.String())
	}
}
