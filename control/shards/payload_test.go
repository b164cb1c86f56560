package shards

import (
	"bytes"
	"testing"

	"github.com/strata-cache/strata/placement/assign"
)

func FuzzDecode(f *testing.F) {
	good := &Published{Phase: Prepare,
		Members: []MemberState{{Addr: "a:1", Weight: 1}, {Addr: "b:1", Weight: 2, State: assign.Returning, DownAt: 3}},
		Owner:   []int{0, 1, 0, 0},
		Moves:   []MoveEntry{{Shard: 2, From: 0, To: 1}}}
	f.Add(good.Encode())                                                                                    // a valid batch in prepare
	f.Add([]byte(`{"members":[{"addr":"a","weight":1,"state":"up"}],"owner":[0,0,0,0]}`))                   // final, one member
	f.Add([]byte(`{"members":[{"addr":"a","weight":1,"state":"gone"}],"owner":[0,0,0,0]}`))                 // unknown state
	f.Add([]byte(`{"phase":"handoff","members":[{"addr":"a","weight":1,"state":"up"}],"owner":[0,0,0,0]}`)) // a phase without moves
	f.Add([]byte(`{"members":[{"addr":"a","weight":1,"state":"up"}],"owner":[0,0,0,9]}`))                   // owner out of range
	f.Add([]byte(`{"members":[]`))                                                                          // truncated
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Decode(b, 4)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes to something that decodes equal, and
		// converts to a topology a pool accepts.
		q, err := Decode(p.Encode(), 4)
		if err != nil || !bytes.Equal(q.Encode(), p.Encode()) {
			t.Fatalf("round trip: %v", err)
		}
		if _, err := p.Topology(1); err != nil {
			t.Fatalf("decoded map has no topology: %v", err)
		}
	})
}
