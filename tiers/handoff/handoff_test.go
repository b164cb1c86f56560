package handoff

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-cache/strata/tiers"
)

var errDown = errors.New("down")

func hit(v string, ttl int64) tiers.Result {
	return tiers.Result{Status: tiers.StatusHit, Value: []byte(v), TTL: ttl, CAS: 9}
}

var (
	stored    = tiers.Result{Status: tiers.StatusStored, CAS: 11}
	miss      = tiers.Result{Status: tiers.StatusMiss}
	exists    = tiers.Result{Status: tiers.StatusExists}
	failed    = tiers.Result{Status: tiers.StatusError, Err: errDown}
	won       = tiers.Result{Status: tiers.StatusHit, Win: true, CAS: 7}
	alreadyWn = tiers.Result{Status: tiers.StatusHit, AlreadyWon: true, CAS: 7}
)

type scenario struct {
	name    string
	rules   Rules
	req     tiers.Request
	start   string // "write", "read" or "fill"
	others  int    // a write's other ends
	source  End    // a write's fill source: it runs there first
	answers []tiers.Result
	outdate bool // the move is no longer in force at the fill's check
	want    string
	res     string
}

var (
	get    = tiers.Request{Kind: tiers.KindGet, WantValue: true}
	set    = tiers.Request{Kind: tiers.KindSet, Value: []byte("new")}
	del    = tiers.Request{Kind: tiers.KindDelete}
	gat    = tiers.Request{Kind: tiers.KindGet, HasTTL: true, TTL: 5, WantValue: true}
	leased = tiers.Request{Kind: tiers.KindGet, Vivify: true, VivifyTTL: 3, WantValue: true}

	moves    = Rules{LeaseTTL: 30}
	replicas = Rules{LeaseTTL: 30, ReadOtherOnLostLease: true}
	regions  = Rules{LeaseTTL: 10, MaxTTL: 3600, MaskPlaceholders: true}
)

var scenarios = []scenario{
	// Writes.
	{name: "set: primary, then delete at the other end", rules: moves, req: set, start: "write", others: 1,
		answers: []tiers.Result{stored, stored}, want: "primary@primary; other@other#0 md", res: "stored"},
	{name: "set: every replica deleted, in order", rules: replicas, req: set, start: "write", others: 3,
		answers: []tiers.Result{stored, stored, stored, stored},
		want:    "primary@primary; other@other#0 md; other@other#1 md; other@other#2 md", res: "stored"},
	{name: "set: a failed delete fails the write, the rest still run", rules: replicas, req: set, start: "write", others: 3,
		answers: []tiers.Result{stored, failed, failed, stored},
		want:    "primary@primary; other@other#0 md; !other-failed; other@other#1 md; other@other#2 md", res: "error down"},
	{name: "set: a failed primary still deletes at the other end", rules: moves, req: set, start: "write", others: 1,
		answers: []tiers.Result{failed, stored}, want: "primary@primary; other@other#0 md", res: "error down"},
	{name: "delete: primary first where fills read from it", rules: moves, req: del, start: "write", others: 1,
		answers: []tiers.Result{stored, stored}, want: "primary@primary; other@other#0 md", res: "stored"},
	{name: "delete: other end first where fills read from it", rules: regions, req: del, start: "write", others: 1, source: AtOther,
		answers: []tiers.Result{miss, stored}, want: "other@other#0 md; primary@primary", res: "stored"},
	{name: "delete: other end failed, primary deleted, error answered", rules: regions, req: del, start: "write", others: 1, source: AtOther,
		answers: []tiers.Result{failed, stored}, want: "other@other#0 md; !other-failed; primary@primary", res: "error down"},
	{name: "set: other end first where fills read from it", rules: moves, req: set, start: "write", others: 1, source: AtOther,
		answers: []tiers.Result{stored, exists}, want: "other@other#0 md; primary@primary", res: "exists"},
	{name: "set: other end failed, primary still written, error answered", rules: moves, req: set, start: "write", others: 1, source: AtOther,
		answers: []tiers.Result{failed, stored}, want: "other@other#0 md; !other-failed; primary@primary", res: "error down"},

	// Reads that do not fill.
	{name: "read: a value is served", rules: moves, req: get, start: "read",
		answers: []tiers.Result{hit("v", 60)}, want: "read@primary", res: `hit "v" ttl=60 cas=9`},
	{name: "read: a placeholder is a miss for a plain read", rules: moves, req: get, start: "read",
		answers: []tiers.Result{alreadyWn}, want: "read@primary", res: "miss"},
	{name: "read: a client's own lease sees memcached's answer", rules: moves, req: leased, start: "read",
		answers: []tiers.Result{won}, want: "read@primary", res: `hit "" ttl=0 cas=7 W`},
	{name: "read: MaskPlaceholders hides it from a lease too", rules: regions, req: leased, start: "read",
		answers: []tiers.Result{won}, want: "read@primary", res: "miss"},
	{name: "read: a gat is answered as it is", rules: moves, req: gat, start: "read",
		answers: []tiers.Result{hit("v", 5)}, want: "read@primary", res: `hit "v" ttl=5 cas=9`},

	// Fills.
	{name: "fill: miss at destination, source read, stored with its TTL", rules: moves, req: get, start: "fill",
		answers: []tiers.Result{won, hit("old", 60), stored},
		want:    "lease@primary N30; source@other mg; fill@primary C7 T60; !filled", res: `hit "old" ttl=60 cas=11`},
	{name: "fill: a never-expiring value stays so", rules: moves, req: get, start: "fill",
		answers: []tiers.Result{won, hit("old", -1), stored},
		want:    "lease@primary N30; source@other mg; fill@primary C7 T0; !filled", res: `hit "old" ttl=-1 cas=11`},
	{name: "fill: MaxTTL bounds a never-expiring value", rules: regions, req: get, start: "fill",
		answers: []tiers.Result{won, hit("old", -1), stored},
		want:    "lease@primary N10; source@other mg; fill@primary C7 T3600; !filled", res: `hit "old" ttl=3600 cas=11`},
	{name: "fill: hit at destination is served, nothing else", rules: moves, req: get, start: "fill",
		answers: []tiers.Result{hit("new", 60)}, want: "lease@primary N30", res: `hit "new" ttl=60 cas=9`},
	{name: "fill: another reader's lease is a miss", rules: moves, req: get, start: "fill",
		answers: []tiers.Result{alreadyWn}, want: "lease@primary N30; !lease-miss", res: "miss"},
	{name: "fill: another reader's lease at a replica reads the owner", rules: replicas, req: get, start: "fill",
		answers: []tiers.Result{alreadyWn, hit("v", 60)}, want: "lease@primary N30; read@other", res: `hit "v" ttl=60 cas=9`},
	{name: "fill: destination error is answered", rules: moves, req: get, start: "fill",
		answers: []tiers.Result{failed}, want: "lease@primary N30", res: "error down"},
	{name: "fill: source miss releases the placeholder", rules: moves, req: get, start: "fill",
		answers: []tiers.Result{won, miss, stored},
		want:    "lease@primary N30; source@other mg; release@primary C7", res: "miss"},
	{name: "fill: source error releases the placeholder", rules: moves, req: get, start: "fill",
		answers: []tiers.Result{won, failed, stored},
		want:    "lease@primary N30; source@other mg; release@primary C7", res: "miss"},
	{name: "fill: an expiring source value is not filled", rules: moves, req: get, start: "fill",
		answers: []tiers.Result{won, hit("old", 0), stored},
		want:    "lease@primary N30; source@other mg; !fill-lost; release@primary C7", res: "miss"},
	{name: "fill: an absolute TTL is not stored as relative", rules: moves, req: get, start: "fill",
		answers: []tiers.Result{won, hit("old", MaxRelativeTTL+1), stored},
		want:    "lease@primary N30; source@other mg; !fill-lost; release@primary C7", res: "miss"},
	{name: "fill: after the window the source's value is dropped", rules: moves, req: get, start: "fill", outdate: true,
		answers: []tiers.Result{won, hit("old", 60), stored},
		want:    "lease@primary N30; source@other mg; !fill-lost; release@primary C7", res: "miss"},
	{name: "fill: a write during the fill wins, the read misses", rules: moves, req: get, start: "fill",
		answers: []tiers.Result{won, hit("old", 60), exists},
		want:    "lease@primary N30; source@other mg; fill@primary C7 T60; !fill-lost", res: "miss"},
	{name: "fill: a delete during the fill wins, the read misses", rules: moves, req: get, start: "fill",
		answers: []tiers.Result{won, hit("old", 60), {Status: tiers.StatusNotFound}},
		want:    "lease@primary N30; source@other mg; fill@primary C7 T60; !fill-lost", res: "miss"},
}

// drive runs s and returns its trace and the client's answer.
func drive(t *testing.T, s scenario) (trace, answer string) {
	t.Helper()
	client := &tiers.Op{Req: s.req}
	client.Req.Key = []byte("k")
	var sub tiers.Request
	var m Machine
	m.Init(&s.rules, client, client.Req.Key, &sub)
	var a Action
	switch s.start {
	case "write":
		a = m.Write(s.others, s.source)
	case "read":
		a = m.Read()
	case "fill":
		a = m.Fill()
	}
	checks := 0
	inForce := func() bool { checks++; return !s.outdate }
	var steps []string
	for i := 0; ; i++ {
		if a.Event != NoEvent {
			steps = append(steps, "!"+a.Event.String())
		}
		if a.Step == Done {
			break
		}
		if string(sub.Key) != "k" {
			t.Fatalf("%v: key %q", a.Step, sub.Key)
		}
		steps = append(steps, describe(a, &sub))
		if i >= len(s.answers) {
			t.Fatalf("no answer scripted for step %d; trace so far %s", i, strings.Join(steps, "; "))
		}
		res := s.answers[i]
		res.Value = append([]byte(nil), res.Value...)
		a = m.Next(&res, inForce)
	}
	if checks > 1 {
		t.Errorf("inForce called %d times", checks)
	}
	return strings.Join(steps, "; "), result(&client.Res)
}

func describe(a Action, r *tiers.Request) string {
	s := a.Step.String() + "@" + a.End.String()
	if a.Step == Other {
		s += fmt.Sprintf("#%d", a.Index)
	}
	switch a.Step {
	case Other:
		s += " md"
	case Source:
		s += " mg"
	case Lease:
		s += fmt.Sprintf(" N%d", r.VivifyTTL)
	case Fill:
		s += fmt.Sprintf(" C%d T%d", r.CompareCAS, r.TTL)
	case Release:
		s += fmt.Sprintf(" C%d", r.CompareCAS)
	}
	return s
}

func result(r *tiers.Result) string {
	switch r.Status {
	case tiers.StatusError:
		return "error " + r.Err.Error()
	case tiers.StatusHit:
		s := fmt.Sprintf("hit %q ttl=%d cas=%d", r.Value, r.TTL, r.CAS)
		if r.Win {
			s += " W"
		}
		return s
	}
	return r.Status.String()
}

func TestScenarios(t *testing.T) {
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			trace, answer := drive(t, s)
			if trace != s.want {
				t.Errorf("steps\n got %s\nwant %s", trace, s.want)
			}
			if answer != s.res {
				t.Errorf("answer %q, want %q", answer, s.res)
			}
		})
	}
}
