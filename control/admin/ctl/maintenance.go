package ctl

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/strata-cache/strata/control/admin"
)

// A rolling restart takes one memcached server of a managed tier through
// maintenance: drained with warm handoff until it holds nothing, restarted
// by the operator (or the host's own tooling), then undrained, its shards
// returning through the same warm handoff. The steps are a pure function
// of the phase and the published shard map (maintStep); runMaintenance is
// the loop that polls the map and sends the two requests.

// maintPhase is where one server's maintenance stands.
type maintPhase uint8

const (
	mDrain     maintPhase = iota // send the drain
	mEmptying                    // its shards move away
	mAwaitDown                   // empty: waiting for it to be stopped
	mAwaitBack                   // down: waiting for it to answer again
	mUndrain                     // back: send the undrain
	mReturning                   // its shards come back
	mDone
)

// maintAction is what the loop does after a step.
type maintAction uint8

const (
	actWait maintAction = iota
	actDrain
	actUndrain
)

// maintStep decides one step of addr's maintenance from the tier's map m:
// the next phase, the request to send, and a line for the operator ("" if
// nothing changed). A server the map no longer names is an error.
func maintStep(p maintPhase, m admin.ShardMap, addr string) (maintPhase, maintAction, string, error) {
	var s *admin.ShardServer
	for i := range m.Servers {
		if m.Servers[i].Addr == addr {
			s = &m.Servers[i]
		}
	}
	if s == nil {
		return p, actWait, "", fmt.Errorf("%s is not in the tier's shard map", addr)
	}
	switch p {
	case mDrain:
		return mEmptying, actDrain, fmt.Sprintf("%s: draining (%d shards)", addr, s.Shards), nil
	case mEmptying:
		switch {
		case s.State == "down":
			// Stopped before it was empty: its shards failed over.
			return mAwaitBack, actWait, fmt.Sprintf("%s: down before it was empty; waiting for it to come back", addr), nil
		case s.State == "draining" && s.Shards == 0 && s.Replicas == 0 && m.MovesInFlight == 0:
			return mAwaitDown, actWait, fmt.Sprintf("%s: holds nothing; restart it now", addr), nil
		}
	case mAwaitDown:
		if s.State == "down" {
			return mAwaitBack, actWait, fmt.Sprintf("%s: down; waiting for it to come back", addr), nil
		}
	case mAwaitBack:
		if s.State != "down" {
			return mUndrain, actWait, fmt.Sprintf("%s: back (%s)", addr, s.State), nil
		}
	case mUndrain:
		return mReturning, actUndrain, fmt.Sprintf("%s: undraining; its shards return warm", addr), nil
	case mReturning:
		if s.State == "up" && s.Shards > 0 && m.MovesInFlight == 0 {
			return mDone, actWait, fmt.Sprintf("%s: up with %d shards; done", addr, s.Shards), nil
		}
	}
	return p, actWait, "", nil
}

// shardControl is what the maintenance loop needs of the admin API.
type shardControl interface {
	ShardMap(ctx context.Context, tier string) (admin.ShardMap, error)
	SetDrain(ctx context.Context, tier, addr string, drain bool) (admin.ShardMap, error)
}

var _ shardControl = (*admin.Client)(nil)

// maintain runs addr's maintenance to the end, polling the map every
// interval; ctx bounds it.
func maintain(ctx context.Context, c shardControl, tier, addr string, interval time.Duration, out io.Writer) error {
	p := mDrain
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for p != mDone {
		m, err := c.ShardMap(ctx, tier)
		if err != nil {
			return err
		}
		next, act, note, err := maintStep(p, m, addr)
		if err != nil {
			return err
		}
		if act != actWait {
			if _, err := c.SetDrain(ctx, tier, addr, act == actDrain); err != nil {
				return err
			}
		}
		if note != "" {
			fmt.Fprintf(out, "%s %s\n", time.Now().Format(time.TimeOnly), note)
		}
		changed := next != p
		p = next
		if p == mDone || (changed && act == actWait) {
			continue // the next phase may already hold: look again at once
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: maintenance not finished (%s): %w", addr, p, ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}

func (p maintPhase) String() string {
	return [...]string{"drain", "emptying", "waiting for it to go down", "waiting for it to come back", "undrain", "returning", "done"}[p]
}

// runMaintenance is `strata ctl maintenance [--all] TIER [ADDR]`.
func runMaintenance(ctx context.Context, c shardControl, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("maintenance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	all := fs.Bool("all", false, "walk every server of the tier, one at a time")
	interval := fs.Duration("interval", time.Second, "how often the shard map is read")
	wait := fs.Duration("wait", time.Hour, "how long the whole walk may take")
	if err := fs.Parse(args); err != nil {
		return err
	}
	rest := fs.Args()
	if (*all && len(rest) != 1) || (!*all && len(rest) != 2) || *interval <= 0 || *wait <= 0 {
		return fmt.Errorf("%w: maintenance TIER HOST:PORT | maintenance --all TIER", ErrUsage)
	}
	ctx, cancel := context.WithTimeout(ctx, *wait)
	defer cancel()
	tier := rest[0]
	addrs := rest[1:]
	if *all {
		m, err := c.ShardMap(ctx, tier)
		if err != nil {
			return err
		}
		for _, s := range m.Servers {
			if s.State != "up" {
				return fmt.Errorf("%s is %s: a rolling restart starts from a pool whose servers are all up", s.Addr, s.State)
			}
			addrs = append(addrs, s.Addr)
		}
		if len(addrs) < 2 {
			return errors.New("a rolling restart needs at least two servers: the others hold the shards meanwhile")
		}
	}
	for i, a := range addrs {
		if *all {
			fmt.Fprintf(stdout, "server %d of %d\n", i+1, len(addrs))
		}
		if err := maintain(ctx, c, tier, a, *interval, stdout); err != nil {
			return err
		}
	}
	return nil
}
