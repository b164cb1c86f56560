package locsvc

import (
	"fmt"
	"strings"

	"github.com/strata-cache/strata/control/locality/loctable"
)

// Layout is where locality routing keeps its state under one prefix of
// the control store (loctable.DefaultPrefix unless configured):
//
//	rows/<name>              the location table (loctable)
//	rows/\x00join/<member>   a strata's join marker (FenceAfter): written
//	                         with its first ack on each session lease, so
//	                         its own watch tells it when it has applied
//	                         every row change up to its joining
//	journal/<name>           unfinished migrations (loctable)
//	create/<name>            a strata asks for the row of a new μ-shard;
//	                         value: its region. The placement leader
//	                         creates the row and deletes the request.
//	acks/<member>            the rows revision a strata applied to every
//	                         loop (decimal), on its session lease
//	counters/<member>/<i>    chunk i of the member's latest access batch
//	                         (EncodeBatch), on its session lease
//	capacity/<member>        the member's region's cache memory in use and
//	                         its size (EncodeCapacity), on its session lease
//	migrate/<name>           operator request to move a μ-shard once;
//	                         value: region. The leader consumes it.
//	outcomes/<name>          what the leader did with the last manual
//	                         request for a μ-shard (EncodeOutcome):
//	                         refused, waiting, or started; written by the
//	                         leader (fenced), deleted by a new request
//	pins/<name>              operator pin of a μ-shard; value: region
//	rulepins/<prefix>        operator pin of a whole rule; value: region
//	election/locality-placement/...  the placement service's election
type Layout struct {
	Prefix string
}

// NewLayout returns the layout under prefix ("" means loctable's default).
func NewLayout(prefix string) Layout {
	if prefix == "" {
		prefix = loctable.DefaultPrefix
	}
	return Layout{Prefix: prefix}
}

// ElectionName is the placement service's election.
const ElectionName = "locality-placement"

func (l Layout) CreatePrefix() string             { return l.Prefix + "create/" }
func (l Layout) CreateKey(name string) string     { return l.CreatePrefix() + name }
func (l Layout) AcksPrefix() string               { return l.Prefix + "acks/" }
func (l Layout) AckKey(member string) string      { return l.AcksPrefix() + member }
func (l Layout) CountersPrefix() string           { return l.Prefix + "counters/" }
func (l Layout) CapacityPrefix() string           { return l.Prefix + "capacity/" }
func (l Layout) CapacityKey(member string) string { return l.CapacityPrefix() + member }
func (l Layout) MigratePrefix() string            { return l.Prefix + "migrate/" }
func (l Layout) MigrateKey(name string) string    { return l.MigratePrefix() + name }
func (l Layout) OutcomesPrefix() string           { return l.Prefix + "outcomes/" }
func (l Layout) OutcomeKey(name string) string    { return l.OutcomesPrefix() + name }
func (l Layout) PinsPrefix() string               { return l.Prefix + "pins/" }
func (l Layout) PinKey(name string) string        { return l.PinsPrefix() + name }
func (l Layout) RulePinsPrefix() string           { return l.Prefix + "rulepins/" }
func (l Layout) RulePinKey(prefix string) string  { return l.RulePinsPrefix() + prefix }

// JoinKey is member's join marker, among the rows (a loctable marker).
func (l Layout) JoinKey(member string) string {
	return loctable.New(nil, l.Prefix).MarkerKey("join/" + member)
}

// CounterKey is chunk i of member's counter batch.
func (l Layout) CounterKey(member string, i int) string {
	return fmt.Sprintf("%s%s/%d", l.CountersPrefix(), member, i)
}

// CounterMember is the member of a counter chunk key, and false for a key
// that is not one.
func (l Layout) CounterMember(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, l.CountersPrefix())
	if !ok {
		return "", false
	}
	m, _, ok := strings.Cut(rest, "/")
	return m, ok && m != ""
}

// checkMember refuses a member id that would break the key layout.
func checkMember(m string) error {
	if m == "" || strings.ContainsAny(m, "/\x00") || len(m) > 255 {
		return fmt.Errorf("locsvc: member %q: must be 1 to 255 bytes without '/'", m)
	}
	return nil
}
