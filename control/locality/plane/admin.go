package plane

import (
	"context"
	"time"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/internal/tlsconn"
	"github.com/strata-cache/strata/proxy/protocol"
)

// AdminTimeout bounds an admin call on the locality state: each is a few
// store round trips, and with the store down an operator gets 503 instead
// of a call that hangs.
const AdminTimeout = 5 * time.Second

// Admin is the placement view as the admin API uses it, every call
// bounded by AdminTimeout.
func (p *Plane) Admin() admin.LocalityControl { return bounded{p.view} }

// bounded bounds every call of v by AdminTimeout.
type bounded struct{ v admin.LocalityControl }

var _ admin.LocalityControl = bounded{}

func (b bounded) MuShard(ctx context.Context, id string) (admin.MuShard, error) {
	ctx, cancel := context.WithTimeout(ctx, AdminTimeout)
	defer cancel()
	return b.v.MuShard(ctx, id)
}

func (b bounded) Migrate(ctx context.Context, id, to string) (admin.MuShard, error) {
	ctx, cancel := context.WithTimeout(ctx, AdminTimeout)
	defer cancel()
	return b.v.Migrate(ctx, id, to)
}

func (b bounded) Pin(ctx context.Context, id, region string) (admin.MuShard, error) {
	ctx, cancel := context.WithTimeout(ctx, AdminTimeout)
	defer cancel()
	return b.v.Pin(ctx, id, region)
}

func (b bounded) Migrations(ctx context.Context) ([]admin.Migration, error) {
	ctx, cancel := context.WithTimeout(ctx, AdminTimeout)
	defer cancel()
	return b.v.Migrations(ctx)
}

// AppendStats appends the links' lines of the stats command.
func (p *Plane) AppendStats(dst []byte) []byte {
	if p.links == nil {
		return dst
	}
	dst = protocol.AppendStatUint(dst, "strata_locality_late_writes_refused", p.router.Stats().Late)
	return p.links.AppendStats(dst)
}

// Metrics adds the router's, the links' and the services' counters to s.
func (p *Plane) Metrics(s *admin.Snapshot) {
	if p.router != nil {
		rs := p.router.Stats()
		s.LocalityRequests = []admin.LabeledCount{
			{Label: "local", Count: rs.Local}, {Label: "forwarded", Count: rs.Forwarded},
			{Label: "wrong_owner", Count: rs.WrongOwner}, {Label: "owner_unreachable", Count: rs.OwnerUnreachable},
		}
		s.LocalityCacheHits, s.LocalityCacheMisses = rs.CacheHits, rs.CacheMisses
		s.LocalityForwardedBytes = rs.ForwardedBytes
		s.LocalityCounterBytes = p.svc.Stats().CounterBytes
		ls := p.links.Stats()
		s.LocalityLinkRequests, s.LocalityLinkStallHeld = ls.Requests, ls.Held
		s.LocalityLateRefused = rs.Late
		if t, ok := p.links.TLSHandshakes(); ok {
			s.AddTLSHandshakes(tlsconn.SideLink, t) // the dialling side; the proxy counts the listener's
		}
	}
	if p.candidate != nil {
		ps := p.candidate.Stats()
		s.LocalityMigrations, s.LocalityMigrationsInFlight = ps.Settled, int64(ps.InFlight)
		s.LocalityDecisions, s.LocalityMovesStarted = ps.Decided, ps.Started
		s.LocalityMoveReturns, s.LocalityMovesRateLimited = ps.Returns, ps.RateLimited
	}
}
