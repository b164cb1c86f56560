package shardmap

import (
	"errors"
	"testing"
)

func mustNew(t *testing.T, version uint64, list []Server, owner ...int) *Map {
	t.Helper()
	m, err := New(version, list, owner)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSupersedes: only a newer version replaces the topology in force; a
// replay of the same one is no change; an older one, or another one under
// the same version, is stale.
func TestSupersedes(t *testing.T) {
	list := servers(3)
	static, _ := Rendezvous(testSeed, 4, list)
	v5 := Topology{Map: mustNew(t, 5, list, 0, 1, 2, 0)}
	v5again := Topology{Map: mustNew(t, 5, list, 0, 1, 2, 0)}
	v5other := Topology{Map: mustNew(t, 5, list, 2, 1, 2, 0)}
	v5draining := Topology{Map: v5.Map, Members: []Member{{Server: list[0], State: MemberActive}, {Server: list[1], State: MemberActive}, {Server: list[2], State: MemberDraining}}}
	v4 := Topology{Map: mustNew(t, 4, list, 1, 1, 1, 1)}
	v6 := Topology{Map: mustNew(t, 6, list, 1, 1, 1, 1)}
	for _, c := range []struct {
		name      string
		cur, next Topology
		replace   bool
		stale     bool
	}{
		{"first publication over the file's map", Topology{Map: static}, v5, true, false},
		{"newer", v5, v6, true, false},
		{"replayed", v5, v5again, false, false},
		{"late", v6, v5, false, true},
		{"late by one", v5, v4, false, true},
		{"same version, other owners", v5, v5other, false, true},
		{"same version, other member states", v5, v5draining, false, true},
		{"back to the file's map", v5, Topology{Map: static}, false, true},
	} {
		replace, err := Supersedes(c.cur, c.next)
		if replace != c.replace || errors.Is(err, ErrStale) != c.stale || (err != nil && !c.stale) {
			t.Errorf("%s: replace %v, err %v; want replace %v, stale %v", c.name, replace, err, c.replace, c.stale)
		}
	}
}

func TestTopologyCheck(t *testing.T) {
	list := servers(2)
	m := mustNew(t, 1, list, 0, 1, 1, 0)
	extra := Member{Server: Server{Addr: "10.0.0.9:11211", Weight: 1}, State: MemberReturning}
	good := []Topology{
		{Map: m},
		{Map: m, Members: []Member{{Server: list[1], State: MemberActive}, {Server: list[0], State: MemberDraining}, extra}},
	}
	for i, tp := range good {
		if err := tp.Check(4); err != nil {
			t.Errorf("good topology %d: %v", i, err)
		}
	}
	bad := map[string]Topology{
		"no map":             {},
		"member missing":     {Map: m, Members: []Member{{Server: list[0], State: MemberActive}}},
		"member twice":       {Map: m, Members: []Member{{Server: list[0], State: MemberActive}, {Server: list[1], State: MemberActive}, {Server: list[0], State: MemberDraining}}},
		"zero weight":        {Map: m, Members: []Member{{Server: list[0], State: MemberActive}, {Server: list[1], State: MemberActive}, {Server: Server{Addr: "x:1"}, State: MemberActive}}},
		"empty address":      {Map: m, Members: []Member{{Server: list[0], State: MemberActive}, {Server: list[1], State: MemberActive}, {Server: Server{Weight: 1}, State: MemberActive}}},
		"unknown state":      {Map: m, Members: []Member{{Server: list[0], State: MemberActive}, {Server: list[1], State: 9}}},
		"wrong shard number": {Map: mustNew(t, 1, list, 0, 1)},
	}
	for name, tp := range bad {
		if err := tp.Check(4); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err %v, want ErrInvalid", name, err)
		}
	}
	if got := (Topology{Map: m}).MemberList(); len(got) != 2 || got[0].Server != list[0] || got[1].State != MemberActive {
		t.Errorf("members of a bare map: %+v", got)
	}
}
