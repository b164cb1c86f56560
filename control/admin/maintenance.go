package ctl

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/strata-cache/strata/control/admin"
)

// A rolling restart takes one memcached server of a managed tier through
// maintenance: drained with warm handoff until it holds nothing, restarted
// by the operator (or the host's own tooling), then undrained, its shards
// returning through the same warm handoff. The steps are a pure function
// of the phase, the published shard map and the server's process id
// (maintStep); runMaintenance is the loop that reads them and sends the
// two requests.
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
func maintStep(st maintState, m admin.ShardMap, addr string, pid int) (maintState, maintAction, string, error) {
	p := st.phase
	var s *admin.ShardServer
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
		switch {
		case pid != st.pid:
			// Restarted before it was empty: its shards failed over.
			return to(mAwaitBack), actWait, fmt.Sprintf("%s: stopped before it was empty", addr), nil
		case s.State == "draining" && s.Shards == 0 && s.Replicas == 0 && m.MovesInFlight == 0:
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

// shardControl is what the maintenance loop needs of the admin API.
type shardControl interface {
	ShardMap(ctx context.Context, tier string) (admin.ShardMap, error)
	SetDrain(ctx context.Context, tier, addr string, drain bool) (admin.ShardMap, error)
}

var _ shardControl = (*admin.Client)(nil)

// pidFunc is a memcached server's process id, 0 when it does not answer.
type pidFunc func(ctx context.Context, addr string) int

// memcachedPID asks addr for "stats" and reads its pid.
func memcachedPID(ctx context.Context, addr string) int {
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
// interval; ctx bounds it.
func maintain(ctx context.Context, c shardControl, pidOf pidFunc, tier, addr string, interval time.Duration, out io.Writer) error {
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
			if _, err := c.SetDrain(ctx, tier, addr, act == actDrain); err != nil {
				return err
			}
		}
		if note != "" {
			fmt.Fprintf(out, "%s %s\n", time.Now().Format(time.TimeOnly), note)
		}
		changed := next.phase != st.phase
		st = next
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

// runMaintenance is `strata ctl maintenance [--all] TIER [ADDR]`.
func runMaintenance(ctx context.Context, c shardControl, pidOf pidFunc, args []string, stdout, stderr io.Writer) error {
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
		if err := maintain(ctx, c, pidOf, tier, a, *interval, stdout); err != nil {
			return err
		}
	}
	return nil
}
