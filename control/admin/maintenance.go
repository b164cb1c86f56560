package admin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// A rolling restart takes one memcached server of a managed tier through
// maintenance: drained with warm handoff until it holds nothing, restarted
// by the operator (or the host's own tooling), then undrained, its shards
// returning through the same warm handoff. The steps are a pure function
// of the phase, the published shard map and the server's process id
// (maintStep); walk is the loop that reads them and sends the two
// requests, run by the admin server for POST /admin/v1/servers/maintenance
// (maintenance_run.go), which `strata ctl maintenance` calls.
//
// The restart is seen on the server itself, by its process id (memcached's
// "stats pid"): the control plane does not declare a server that owns
// nothing down (no agent routes to it, so none reports it unreachable),
// and a restart quicker than its detection time would not be seen there.

// maintPhase is where one server's maintenance stands.
type maintPhase uint8

const (
	mDrain     maintPhase = iota // send the drain
	mEmptying                    // its shards move away
	mAwaitDown                   // empty: waiting for it to be stopped
	mAwaitBack                   // stopped: waiting for a new process to answer
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

// maintState is one server's maintenance: the phase, and the process id
// the server answered with when it was drained.
type maintState struct {
	phase maintPhase
	pid   int
}

// maintStep decides one step of addr's maintenance from the tier's map m
// and pid, the server's process id now (0: it does not answer): the next
// state, the request to send, and a line for the operator ("" if nothing
// changed). A server the map no longer names is an error, and so is one
// that does not answer when the walk starts.
func maintStep(st maintState, m ShardMap, addr string, pid int) (maintState, maintAction, string, error) {
	p := st.phase
	var s *ShardServer
	for i := range m.Servers {
		if m.Servers[i].Addr == addr {
			s = &m.Servers[i]
		}
	}
	if s == nil {
		return st, actWait, "", fmt.Errorf("%s is not in the tier's shard map", addr)
	}
	to := func(p maintPhase) maintState { return maintState{phase: p, pid: st.pid} }
	switch p {
	case mDrain:
		if pid == 0 {
			return st, actWait, "", fmt.Errorf("%s does not answer stats: its restart could not be seen", addr)
		}
		return maintState{phase: mEmptying, pid: pid}, actDrain, fmt.Sprintf("%s: draining (%d shards)", addr, s.Shards), nil
	case mEmptying:
		empty := s.State == "draining" && s.Shards == 0 && s.Replicas == 0 && m.MovesInFlight == 0
		switch {
		case pid != st.pid && empty:
			// Emptied and restarted between two looks.
			return to(mAwaitBack), actWait, fmt.Sprintf("%s: holds nothing, and was stopped", addr), nil
		case pid != st.pid:
			// Restarted before it was empty: its shards failed over.
			return to(mAwaitBack), actWait, fmt.Sprintf("%s: stopped before it was empty", addr), nil
		case empty:
			return to(mAwaitDown), actWait, fmt.Sprintf("%s: holds nothing; restart it now", addr), nil
		}
	case mAwaitDown:
		if pid != st.pid {
			return to(mAwaitBack), actWait, fmt.Sprintf("%s: stopped; waiting for it to answer again", addr), nil
		}
	case mAwaitBack:
		if pid != 0 && pid != st.pid {
			return to(mUndrain), actWait, fmt.Sprintf("%s: back (process %d)", addr, pid), nil
		}
	case mUndrain:
		return to(mReturning), actUndrain, fmt.Sprintf("%s: undraining; its shards return warm", addr), nil
	case mReturning:
		if s.State == "up" && s.Shards > 0 && m.MovesInFlight == 0 {
			return to(mDone), actWait, fmt.Sprintf("%s: up with %d shards; done", addr, s.Shards), nil
		}
	}
	return st, actWait, "", nil
}

// PIDFunc is a memcached server's process id, 0 when it does not answer.
type PIDFunc func(ctx context.Context, addr string) int

// MemcachedPID asks addr for "stats" and reads its pid.
func MemcachedPID(ctx context.Context, addr string) int {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0
	}
	defer c.Close()
	dl, _ := ctx.Deadline()
	_ = c.SetDeadline(dl)
	if _, err := io.WriteString(c, "stats\r\n"); err != nil {
		return 0
	}
	sc := bufio.NewScanner(c)
	pid := 0
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "STAT pid "); ok {
			pid, _ = strconv.Atoi(v)
		}
		if line == "END" {
			return pid
		}
	}
	return 0
}

// maintain runs addr's maintenance to the end, polling the map every
// interval and handing each step to show (phase and line, "" for none);
// ctx bounds it. addr is marked under maintenance from before its drain
// to the end of its return, so the leader holds the handoff of its moves
// for the maintenance grace (the walk keeps their source up); the mark
// is removed however the walk ends, cancelled included.
func maintain(ctx context.Context, c ShardControl, pidOf PIDFunc, tier, addr string, interval time.Duration, show func(maintPhase, string)) (err error) {
	if err := c.SetMaintenance(ctx, tier, addr, true); err != nil {
		return err
	}
	defer func() {
		// A cancelled walk still removes its mark: a fresh bound.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if cerr := c.SetMaintenance(cctx, tier, addr, false); cerr != nil && err == nil {
			err = fmt.Errorf("%s: maintenance mark not removed, its moves keep the maintenance grace: %w", addr, cerr)
		}
	}()
	st := maintState{phase: mDrain}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for st.phase != mDone {
		m, err := c.ShardMap(ctx, tier)
		if err != nil {
			return err
		}
		next, act, note, err := maintStep(st, m, addr, pidOf(ctx, addr))
		if err != nil {
			return err
		}
		if act != actWait {
			if err := c.SetDrain(ctx, tier, addr, act == actDrain); err != nil {
				return err
			}
		}
		changed := next.phase != st.phase
		st = next
		show(st.phase, note)
		if st.phase == mDone || (changed && act == actWait) {
			continue // the next phase may already hold: look again at once
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: maintenance not finished (%s): %w", addr, st.phase, ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}

func (p maintPhase) String() string {
	return [...]string{"drain", "emptying", "waiting for it to be stopped", "waiting for it to answer again", "undrain", "returning", "done"}[p]
}

// walkOf is the servers a maintenance request walks, in order, judged on
// the tier's map m: addr alone, or with all every server, which must all
// be up (a rolling restart starts from a whole pool) and be at least two
// (the others hold the shards meanwhile). A refusal is a *FieldError.
func walkOf(m ShardMap, addr string, all bool) ([]string, error) {
	if !all {
		for _, s := range m.Servers {
			if s.Addr == addr {
				return []string{addr}, nil
			}
		}
		return nil, &FieldError{Field: "addr", Err: fmt.Errorf("%s is not in the tier's shard map", addr)}
	}
	var addrs []string
	for _, s := range m.Servers {
		if s.State != "up" {
			return nil, &FieldError{Field: "all", Err: fmt.Errorf("%s is %s: a rolling restart starts from a pool whose servers are all up", s.Addr, s.State)}
		}
		addrs = append(addrs, s.Addr)
	}
	if len(addrs) < 2 {
		return nil, &FieldError{Field: "all", Err: errors.New("a rolling restart needs at least two servers: the others hold the shards meanwhile")}
	}
	return addrs, nil
}
