package shards

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/control/store"
)

// View answers the admin API's shard calls for the managed tiers of one
// strata, from the store: any strata answers, leader or not.
type View struct {
	st store.ReadWriter

	mu    sync.Mutex // guards tiers
	tiers map[string]TierInfo
}

// TierInfo is what View knows of a managed tier from the configuration.
type TierInfo struct {
	Shards  int
	Members []string
	Compat  bool // its pools start on a compat layout (convert.go)
}

var _ admin.ShardControl = (*View)(nil)

// NewView returns a view over st for tiers.
func NewView(st store.ReadWriter, tiers map[string]TierInfo) *View {
	return &View{st: st, tiers: tiers}
}

// SetMembers replaces the members of a managed tier (a reload).
func (v *View) SetMembers(tier string, members []string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if ti, ok := v.tiers[tier]; ok {
		ti.Members = append([]string(nil), members...)
		v.tiers[tier] = ti
	}
}

func (v *View) tier(tier string) (TierInfo, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	ti, ok := v.tiers[tier]
	return ti, ok
}

// ShardMap returns tier's published map with the agents' loads. Before the
// first publication it lists the configured members, up, version 0.
func (v *View) ShardMap(ctx context.Context, tier string) (admin.ShardMap, error) {
	ti, ok := v.tier(tier)
	if !ok {
		return admin.ShardMap{}, &admin.FieldError{Field: "tier", Err: fmt.Errorf("tier %q is not managed by the control plane", tier)}
	}
	cur, err := store.ReadVersioned(ctx, v.st, mapKey(tier))
	if err != nil {
		return admin.ShardMap{}, err
	}
	out := admin.ShardMap{Version: cur.Version, Servers: []admin.ShardServer{}}
	if ti.Compat {
		if out.ConvertPaused, err = convertPaused(ctx, v.st, tier); err != nil {
			return admin.ShardMap{}, err
		}
	}
	if cur.Version == 0 {
		for _, a := range ti.Members {
			out.Servers = append(out.Servers, admin.ShardServer{Addr: a, State: "up"})
		}
		if ti.Compat {
			out.OnLayout, out.LayoutShare = ti.Shards, 1
		}
		return out, nil
	}
	p, err := Decode(cur.Payload, ti.Shards)
	if err != nil {
		return admin.ShardMap{}, err
	}
	reports, err := readReports(ctx, v.st, tier)
	if err != nil {
		return admin.ShardMap{}, err
	}
	req, _ := sumLoads(reports, ti.Shards)
	out.Servers = make([]admin.ShardServer, len(p.Members))
	for i, m := range p.Members {
		out.Servers[i] = admin.ShardServer{Addr: m.Addr, State: m.State.String()}
	}
	for sh, o := range p.Owner {
		out.Servers[o].Shards++
		if req != nil {
			out.Servers[o].Load += req[sh]
		}
	}
	for _, r := range p.Replicas {
		out.Servers[r.Member].Replicas++
	}
	sort.Slice(out.Servers, func(i, j int) bool { return out.Servers[i].Addr < out.Servers[j].Addr })
	out.MovesInFlight, out.Phase = len(p.Moves), string(p.Phase)
	out.OnLayout, out.LayoutShare = len(p.Layout), float64(len(p.Layout))/float64(ti.Shards)
	return out, nil
}

// SetConvertPaused records or removes the operator's pause of tier's
// conversion; the leader starts no new batch while it stands.
func (v *View) SetConvertPaused(ctx context.Context, tier string, paused bool) error {
	ti, ok := v.tier(tier)
	switch {
	case !ok:
		return &admin.FieldError{Field: "tier", Err: fmt.Errorf("tier %q is not managed by the control plane", tier)}
	case !ti.Compat:
		return &admin.FieldError{Field: "tier", Err: fmt.Errorf("tier %q has no compat layout to convert from", tier)}
	}
	var err error
	if paused {
		_, err = store.PutRow(ctx, v.st, pausedKey(tier), []byte("1"))
	} else {
		_, err = store.DeleteRow(ctx, v.st, pausedKey(tier))
	}
	return err
}

// SetDrain records or removes the drain intent of addr; the leader acts on
// it at its next round.
func (v *View) SetDrain(ctx context.Context, tier, addr string, drain bool) error {
	return v.setServerRow(ctx, tier, addr, drainKey(tier, addr), drain)
}

// SetMaintenance records or removes that a maintenance walk has addr:
// while it stands, the leader gives moves from or to addr
// MaintenanceGrace (LeaderConfig).
func (v *View) SetMaintenance(ctx context.Context, tier, addr string, on bool) error {
	return v.setServerRow(ctx, tier, addr, maintKey(tier, addr), on)
}

// setServerRow puts (on) or deletes the row key of addr, a server of tier.
func (v *View) setServerRow(ctx context.Context, tier, addr, key string, on bool) error {
	ti, ok := v.tier(tier)
	if !ok {
		return &admin.FieldError{Field: "tier", Err: fmt.Errorf("tier %q is not managed by the control plane", tier)}
	}
	known := false
	for _, a := range ti.Members {
		known = known || a == addr
	}
	if !known {
		return &admin.FieldError{Field: "addr", Err: fmt.Errorf("%s is not a server of tier %s", addr, tier)}
	}
	var err error
	if on {
		_, err = store.PutRow(ctx, v.st, key, []byte("1"))
	} else {
		_, err = store.DeleteRow(ctx, v.st, key)
	}
	return err
}
