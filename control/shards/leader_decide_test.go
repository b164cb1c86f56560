package shards

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/placement/assign"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// The decision of a round, from a table: no store, no network, a fixed
// time and seed, so every outcome is exact.

var dt0 = time.Unix(1_000_000, 0)

// decideMembers are four servers; decideMap has them own 8 shards in turn.
var decideMembers = []shardmap.Server{{Addr: "a:1", Weight: 1}, {Addr: "b:1", Weight: 1}, {Addr: "c:1", Weight: 1}, {Addr: "d:1", Weight: 1}}

func decideCfg() LeaderConfig {
	return LeaderConfig{Tier: "t", Shards: 8, Members: decideMembers, Detection: 2 * time.Second, Rebalance: time.Hour,
		Grace: 5 * time.Second, SettleHold: 3 * time.Second, Seed: 1}
}

// decideMap is the map: phase and moves, then member states by letter
// (u up, d down, r returning, x draining).
func decideMap(phase Phase, states string, moves ...MoveEntry) *Published {
	p := &Published{Phase: phase, Owner: []int{0, 1, 2, 3, 0, 1, 2, 3}, Moves: moves}
	for i, s := range decideMembers {
		st := map[byte]assign.State{'u': assign.Up, 'd': assign.Down, 'r': assign.Returning, 'x': assign.Draining}[states[i]]
		m := MemberState{Addr: s.Addr, Weight: 1, State: st}
		if st == assign.Down || st == assign.Returning {
			m.DownAt, m.Incarnation = 1, 1
		}
		p.Members = append(p.Members, m)
	}
	for sh, o := range p.Owner {
		if !holdsShards(p.Members[o].State) {
			p.Owner[sh] = 0 // failed over to a:1 (up in every table row)
		}
	}
	for _, mv := range moves {
		if p.phaseOf(mv) != Prepare {
			p.Owner[mv.Shard] = mv.To // past prepare, the destination owns
		}
	}
	return p
}

// render is a map in one line: phase, owners, moves, members' states
// with DownAt/Incarnation, and the former owners.
func render(p *Published) string {
	if p == nil {
		return "none"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "phase=%q owner=%v moves=%v", p.Phase, p.Owner, p.Moves)
	for _, m := range p.Members {
		fmt.Fprintf(&b, " %s:%v/%d/%d", m.Addr, m.State, m.DownAt, m.Incarnation)
	}
	if len(p.Former) > 0 {
		fmt.Fprintf(&b, " former=%v", p.Former)
	}
	return b.String()
}

// applied is two agents' reports: both applied v, a reporting b:1 down.
func applied(v uint64, unreachable ...string) []Report {
	return []Report{{ID: "x", Applied: v, Unreachable: unreachable}, {ID: "y", Applied: v, Unreachable: unreachable}}
}

// running is the memory of a leader that has led since dt0 and saw the
// drain intents of drained; the table dates the moves of the map in force
// at dt0 too (seenSince).
func running(drained ...string) roundMemory {
	m := roundMemory{round: 3, lastPeriodic: dt0, lastScale: dt0, drains: map[string]bool{}}
	for _, a := range drained {
		m.drains[a] = true
	}
	return m
}

func TestDecideRound(t *testing.T) {
	for _, tc := range []struct {
		name string
		// perServer is MaxMovesPerServer (0: no cap).
		perServer int
		mem       roundMemory
		in        roundInput
		want      string
	}{{
		name: "the first publication is the map in force, unchanged",
		in:   roundInput{roundRead: roundRead{Version: 0, Map: decideMap(Final, "uuuu"), Reports: applied(0)}, Now: dt0},
		want: `phase="" owner=[0 1 2 3 0 1 2 3] moves=[] a:1:up/0/0 b:1:up/0/0 c:1:up/0/0 d:1:up/0/0`,
	}, {
		name: "nothing changed: nothing published",
		mem:  running(),
		in:   roundInput{roundRead: roundRead{Version: 1, Map: decideMap(Final, "uuuu"), Reports: applied(1)}, Now: dt0.Add(time.Second)},
		want: "none",
	}, {
		name: "a suspect server is not failed over",
		mem:  running(),
		in: roundInput{roundRead: roundRead{Version: 1, Map: decideMap(Final, "uuuu"), Reports: applied(1, "c:1")}, Now: dt0.Add(time.Second),
			Verdicts: map[string]assign.Verdict{"c:1": assign.Suspect}},
		want: "none",
	}, {
		name: "a dead server's shards fail over in one final map, its incarnation the new version",
		mem:  running(),
		in: roundInput{roundRead: roundRead{Version: 1, Map: decideMap(Final, "uuuu"), Reports: applied(1, "c:1")}, Now: dt0.Add(3 * time.Second),
			Verdicts: map[string]assign.Verdict{"c:1": assign.Dead}},
		want: `phase="" owner=[0 1 0 3 0 1 1 3] moves=[] a:1:up/0/0 b:1:up/0/0 c:1:down/2/2 d:1:up/0/0`,
	}, {
		name: "a down server that answers again turns returning",
		mem:  running(),
		in:   roundInput{roundRead: roundRead{Version: 2, Map: decideMap(Final, "uudu"), Reports: applied(2)}, Now: dt0.Add(time.Second)},
		want: `phase="" owner=[0 1 0 3 0 1 0 3] moves=[] a:1:up/0/0 b:1:up/0/0 c:1:returning/1/1 d:1:up/0/0`,
	}, {
		name: "a returning server the shell could not flush stays returning",
		mem:  running(),
		in:   roundInput{roundRead: roundRead{Version: 2, Map: decideMap(Final, "uuru"), Reports: applied(2)}, Now: dt0.Add(time.Second)},
		want: "none",
	}, {
		name: "a flushed returning server is up again, and a batch fills it",
		mem:  running(),
		in: roundInput{roundRead: roundRead{Version: 2, Map: decideMap(Final, "uuru"), Reports: applied(2)}, Now: dt0.Add(time.Second),
			Flushed: map[string]bool{"c:1": true}},
		want: `phase="prepare" owner=[0 1 0 3 0 1 0 3] moves=[{0 0 2} {2 0 2}] a:1:up/0/0 b:1:up/0/0 c:1:up/0/1 d:1:up/0/0`,
	}, {
		name: "a drain intent plans a batch emptying the server",
		mem:  running(),
		in: roundInput{roundRead: roundRead{Version: 1, Map: decideMap(Final, "uuuu"), Reports: applied(1), Drains: map[string]bool{"b:1": true}},
			Now: dt0.Add(time.Second)},
		want: `phase="prepare" owner=[0 1 2 3 0 1 2 3] moves=[{1 1 0} {5 1 0}] a:1:up/0/0 b:1:draining/0/0 c:1:up/0/0 d:1:up/0/0`,
	}, {
		name: "prepare waits for every agent",
		mem:  running("b:1"),
		in: roundInput{roundRead: roundRead{Version: 2, Map: decideMap(Prepare, "uxuu", MoveEntry{Shard: 1, From: 1, To: 0}, MoveEntry{Shard: 5, From: 1, To: 0}),
			Reports: []Report{{ID: "x", Applied: 2}, {ID: "y", Applied: 1}}, Drains: map[string]bool{"b:1": true}}, Now: dt0.Add(time.Second)},
		want: "none",
	}, {
		name: "prepare applied everywhere: handoff, the source a former owner",
		mem:  running("b:1"),
		in: roundInput{roundRead: roundRead{Version: 2, Map: decideMap(Prepare, "uxuu", MoveEntry{Shard: 1, From: 1, To: 0}, MoveEntry{Shard: 5, From: 1, To: 0}),
			Reports: applied(2), Drains: map[string]bool{"b:1": true}}, Now: dt0.Add(time.Second)},
		want: `phase="handoff" owner=[0 0 2 3 0 0 2 3] moves=[{1 1 0} {5 1 0}] a:1:up/0/0 b:1:draining/0/0 c:1:up/0/0 d:1:up/0/0 former=map[b:1:[1 5]]`,
	}, {
		name: "handoff holds for the grace window",
		mem:  running("b:1"),
		in: roundInput{roundRead: roundRead{Version: 3, Map: decideMap(Handoff, "uxuu", MoveEntry{Shard: 1, From: 1, To: 0}, MoveEntry{Shard: 5, From: 1, To: 0}),
			Reports: applied(3), Drains: map[string]bool{"b:1": true}}, Now: dt0.Add(5*time.Second - 1)},
		want: "none",
	}, {
		name: "handoff after the grace window: settle",
		mem:  running("b:1"),
		in: roundInput{roundRead: roundRead{Version: 3, Map: decideMap(Handoff, "uxuu", MoveEntry{Shard: 1, From: 1, To: 0}, MoveEntry{Shard: 5, From: 1, To: 0}),
			Reports: applied(3), Drains: map[string]bool{"b:1": true}}, Now: dt0.Add(5 * time.Second)},
		want: `phase="settle" owner=[0 0 2 3 0 0 2 3] moves=[{1 1 0} {5 1 0}] a:1:up/0/0 b:1:draining/0/0 c:1:up/0/0 d:1:up/0/0`,
	}, {
		name: "settle holds for SettleHold",
		mem:  running("b:1"),
		in: roundInput{roundRead: roundRead{Version: 4, Map: decideMap(Settle, "uxuu", MoveEntry{Shard: 1, From: 1, To: 0}, MoveEntry{Shard: 5, From: 1, To: 0}),
			Reports: applied(4), Drains: map[string]bool{"b:1": true}}, Now: dt0.Add(3*time.Second - 1)},
		want: "none",
	}, {
		name: "settle after SettleHold: final",
		mem:  running("b:1"),
		in: roundInput{roundRead: roundRead{Version: 4, Map: decideMap(Settle, "uxuu", MoveEntry{Shard: 1, From: 1, To: 0}, MoveEntry{Shard: 5, From: 1, To: 0}),
			Reports: applied(4), Drains: map[string]bool{"b:1": true}}, Now: dt0.Add(3 * time.Second)},
		want: `phase="" owner=[0 0 2 3 0 0 2 3] moves=[] a:1:up/0/0 b:1:draining/0/0 c:1:up/0/0 d:1:up/0/0`,
	}, {
		name: "a batch starts beside a move in its grace window while the draining server owns shards",
		mem:  running("b:1"),
		in: roundInput{roundRead: roundRead{Version: 3, Map: decideMap(Handoff, "uxuu", MoveEntry{Shard: 1, From: 1, To: 0}),
			Reports: applied(3), Drains: map[string]bool{"b:1": true}}, Now: dt0.Add(time.Second)},
		want: `phase="prepare" owner=[0 0 2 3 0 1 2 3] moves=[{1 1 0 handoff} {5 1 0}] a:1:up/0/0 b:1:draining/0/0 c:1:up/0/0 d:1:up/0/0`,
	}, {
		name:      "no room on the destination: the batch waits",
		perServer: 1,
		mem:       running("b:1"),
		in: roundInput{roundRead: roundRead{Version: 3, Map: decideMap(Handoff, "uxuu", MoveEntry{Shard: 1, From: 1, To: 0}),
			Reports: applied(3), Drains: map[string]bool{"b:1": true}}, Now: dt0.Add(time.Second)},
		want: "none",
	}, {
		name:      "room again once the move settles: the batch starts, the settling move goes on",
		perServer: 1,
		mem:       running("b:1"),
		in: roundInput{roundRead: roundRead{Version: 3, Map: decideMap(Settle, "uxuu", MoveEntry{Shard: 1, From: 1, To: 0}),
			Reports: applied(3), Drains: map[string]bool{"b:1": true}}, Now: dt0.Add(time.Second)},
		want: `phase="prepare" owner=[0 0 2 3 0 1 2 3] moves=[{1 1 0 settle} {5 1 0}] a:1:up/0/0 b:1:draining/0/0 c:1:up/0/0 d:1:up/0/0`,
	}, {
		name: "moves in different phases step on their own clocks",
		mem:  running("b:1"),
		in: roundInput{roundRead: roundRead{Version: 3, Map: decideMap(Handoff, "uxuu", MoveEntry{Shard: 1, From: 1, To: 0, Phase: Settle}, MoveEntry{Shard: 5, From: 1, To: 0}),
			Reports: applied(3), Drains: map[string]bool{"b:1": true}}, Now: dt0.Add(3 * time.Second)},
		want: `phase="handoff" owner=[0 0 2 3 0 0 2 3] moves=[{5 1 0}] a:1:up/0/0 b:1:draining/0/0 c:1:up/0/0 d:1:up/0/0`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			before := render(tc.in.Map)
			if tc.mem.round > 0 {
				tc.mem.moves = dated(nil, tc.in.Map, dt0)
			}
			cfg := decideCfg()
			cfg.MaxMovesPerServer = tc.perServer
			_, d, err := decideRound(cfg, tc.mem, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := render(d.Publish); got != tc.want {
				t.Fatalf("published\n  %s\nwant\n  %s", got, tc.want)
			}
			if after := render(tc.in.Map); after != before {
				t.Fatalf("the map read was modified:\n  %s\nwas\n  %s", after, before)
			}
		})
	}
}

// The memory a round leaves: a new leader's first round starts its
// clocks; a phase first seen is dated now; a drain seen is remembered.
func TestDecideRoundMemory(t *testing.T) {
	in := roundInput{roundRead: roundRead{Version: 2, Map: decideMap(Handoff, "uxuu", MoveEntry{Shard: 1, From: 1, To: 0}),
		Reports: applied(1), Drains: map[string]bool{"b:1": true}}, Now: dt0}
	mem, d, err := decideRound(decideCfg(), roundMemory{}, in)
	if err != nil || d.Publish == nil {
		// Its drains are news to a new leader: it republishes.
		t.Fatalf("first round: %s, %v", render(d.Publish), err)
	}
	want := roundMemory{round: 1, moves: map[int]moveClock{1: {Handoff, dt0}}, lastPeriodic: dt0, lastScale: dt0, drains: in.Drains, replan: true}
	if fmt.Sprint(mem) != fmt.Sprint(want) {
		t.Fatalf("memory %+v, want %+v", mem, want)
	}
}

// readyToFlush names the returning servers every agent reaches and no
// agent routes to any more, whatever the other members' states.
func TestReadyToFlush(t *testing.T) {
	p := decideMap(Final, "rrdr")
	p.Members[1].DownAt = 3
	got := readyToFlush(p, map[string]assign.Verdict{"d:1": assign.Suspect}, applied(2))
	if fmt.Sprint(got) != "[a:1]" {
		t.Fatalf("ready %v, want [a:1] (b:1 not applied everywhere, c:1 down, d:1 suspect)", got)
	}
	if got := readyToFlush(p, nil, applied(3, "a:1")); fmt.Sprint(got) != "[b:1 d:1]" {
		t.Fatalf("ready %v, want [b:1 d:1] (a:1 unreachable to the agents)", got)
	}
}
