package compare

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/strata-cache/strata/bench/proc"
)

// The targets, in the order they are measured. The first two are the
// yardsticks the ratios refer to.
const (
	TargetMemcached      = "memcached"       // memcached itself
	TargetTwemproxy      = "twemproxy"       // nutcracker over one memcached
	TargetStrataSingle   = "strata-single"   // strata --l1 none --l2 <memcached>
	TargetStrataLayered  = "strata-l1l2"     // strata --l1 <memcached A> --l2 <memcached B>
	TargetStrataEmbedded = "strata-embedded" // strata on its embedded tiers
)

// AllTargets lists every target in measuring order.
var AllTargets = []string{TargetMemcached, TargetTwemproxy, TargetStrataSingle, TargetStrataLayered, TargetStrataEmbedded}

// Binaries are the programs the comparison runs. Empty fields are looked up
// on PATH (memcached, nutcracker); Strata must be set by the caller — it is
// the strata binary itself, re-executed with `serve`.
type Binaries struct {
	Memcached  string
	Nutcracker string
	Strata     string
}

// resolve finds the binaries the targets need and reports every missing one
// by name.
func (b *Binaries) resolve(targets []string) error {
	need := map[string]bool{}
	for _, t := range targets {
		switch t {
		case TargetMemcached:
			need["memcached"] = true
		case TargetTwemproxy:
			need["memcached"], need["nutcracker"] = true, true
		case TargetStrataSingle, TargetStrataLayered:
			need["memcached"], need["strata"] = true, true
		case TargetStrataEmbedded:
			need["strata"] = true
		default:
			return fmt.Errorf("unknown target %q (want one of %v)", t, AllTargets)
		}
	}
	var err error
	if need["memcached"] && b.Memcached == "" {
		if b.Memcached, err = proc.LookBinary("memcached", "the memcached package"); err != nil {
			return err
		}
	}
	if need["nutcracker"] && b.Nutcracker == "" {
		if b.Nutcracker, err = proc.LookBinary("nutcracker", "the nutcracker package (twemproxy)"); err != nil {
			return err
		}
	}
	if need["strata"] {
		if b.Strata == "" {
			return &proc.MissingBinaryError{Name: "strata", Package: "strata", Err: fmt.Errorf("no strata binary given")}
		}
		if _, err := os.Stat(b.Strata); err != nil {
			return &proc.MissingBinaryError{Name: "strata", Package: "strata", Err: err}
		}
	}
	return nil
}

// topology is one target's running processes.
type topology struct {
	name     string
	addr     string          // where the load goes
	proxy    *proc.Process   // the process under test (memcached itself for the direct target)
	backends []*proc.Process // memcached servers behind a proxy
}

func (t *topology) stop() {
	if t.proxy != nil {
		t.proxy.Stop()
	}
	for _, b := range t.backends {
		b.Stop()
	}
}

// launcher starts processes on free loopback ports and keeps every one it
// started so they can all be stopped, whatever happens.
type launcher struct {
	bins Binaries
	dir  string // scratch directory for configuration files and logs
	// memcachedMB is memcached's -m; strata's embedded L2 defaults to 1 GiB,
	// so the memcached targets get as much to keep the comparison fair.
	memcachedMB int
	// maxConns is the most client connections a target must accept
	// (Config.IdleConns); memcached's own limit (-c) defaults to 1024.
	maxConns    int
	started     []*proc.Process
	readyWithin time.Duration
}

// stopAll stops every process the launcher started. Idempotent.
func (l *launcher) stopAll() {
	for i := len(l.started) - 1; i >= 0; i-- {
		l.started[i].Stop()
	}
}

// startServer runs a server on a fresh free port, retrying on another port
// if the first one was taken in the meantime.
func (l *launcher) startServer(ctx context.Context, name, bin string, args func(port int) ([]string, error)) (*proc.Process, string, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := proc.FreePort()
		if err != nil {
			return nil, "", err
		}
		argv, err := args(port)
		if err != nil {
			return nil, "", err
		}
		p, err := proc.Start(name, bin, argv...)
		if err != nil {
			return nil, "", err
		}
		l.started = append(l.started, p)
		addr := "127.0.0.1:" + strconv.Itoa(port)
		if lastErr = waitReady(ctx, p, addr, l.readyWithin); lastErr == nil {
			return p, addr, nil
		}
		p.Stop()
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
	}
	return nil, "", lastErr
}

func (l *launcher) memcached(ctx context.Context, name string) (*proc.Process, string, error) {
	return l.startServer(ctx, name, l.bins.Memcached, func(port int) ([]string, error) {
		args := []string{"-l", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "0", "-t", "2", "-m", strconv.Itoa(l.memcachedMB),
			"-c", strconv.Itoa(max(1024, l.maxConns+64))}
		if os.Geteuid() == 0 {
			args = append(args, "-u", "nobody") // memcached refuses to run as root otherwise
		}
		return args, nil
	})
}

// nutcracker writes a one-pool twemproxy configuration over backend and runs
// it with its stats listener on another free loopback port.
func (l *launcher) nutcracker(ctx context.Context, backend string) (*proc.Process, string, error) {
	return l.startServer(ctx, TargetTwemproxy, l.bins.Nutcracker, func(port int) ([]string, error) {
		statsPort, err := proc.FreePort()
		if err != nil {
			return nil, err
		}
		conf := filepath.Join(l.dir, "nutcracker-"+strconv.Itoa(port)+".yml")
		yml := fmt.Sprintf(`bench:
  listen: 127.0.0.1:%d
  hash: fnv1a_64
  distribution: ketama
  timeout: 2000
  auto_eject_hosts: false
  server_connections: 1
  servers:
    - %s:1
`, port, backend)
		if err := os.WriteFile(conf, []byte(yml), 0o600); err != nil {
			return nil, err
		}
		return []string{"-c", conf, "-s", strconv.Itoa(statsPort), "-a", "127.0.0.1",
			"-p", filepath.Join(l.dir, "nutcracker-"+strconv.Itoa(port)+".pid"),
			"-o", filepath.Join(l.dir, "nutcracker-"+strconv.Itoa(port)+".log"), "-v", "4"}, nil
	})
}

// strata re-executes the strata binary with serve and the given tier flags.
func (l *launcher) strata(ctx context.Context, name string, tierArgs ...string) (*proc.Process, string, error) {
	return l.startServer(ctx, name, l.bins.Strata, func(port int) ([]string, error) {
		admin, err := proc.FreePort()
		if err != nil {
			return nil, err
		}
		args := []string{"serve", "--listen", "127.0.0.1:" + strconv.Itoa(port), "--admin", "127.0.0.1:" + strconv.Itoa(admin)}
		return append(args, tierArgs...), nil
	})
}

// setup starts the processes of one target.
func (l *launcher) setup(ctx context.Context, target string) (*topology, error) {
	t := &topology{name: target}
	var err error
	switch target {
	case TargetMemcached:
		t.proxy, t.addr, err = l.memcached(ctx, TargetMemcached)
	case TargetTwemproxy:
		var m *proc.Process
		var maddr string
		if m, maddr, err = l.memcached(ctx, "memcached (behind twemproxy)"); err == nil {
			t.backends = []*proc.Process{m}
			t.proxy, t.addr, err = l.nutcracker(ctx, maddr)
		}
	case TargetStrataSingle:
		var m *proc.Process
		var maddr string
		if m, maddr, err = l.memcached(ctx, "memcached (behind strata)"); err == nil {
			t.backends = []*proc.Process{m}
			t.proxy, t.addr, err = l.strata(ctx, target, "--l1", "none", "--l2", maddr)
		}
	case TargetStrataLayered:
		var a, b *proc.Process
		var aaddr, baddr string
		if a, aaddr, err = l.memcached(ctx, "memcached L1"); err == nil {
			t.backends = []*proc.Process{a}
			if b, baddr, err = l.memcached(ctx, "memcached L2"); err == nil {
				t.backends = append(t.backends, b)
				t.proxy, t.addr, err = l.strata(ctx, target, "--l1", aaddr, "--l2", baddr)
			}
		}
	case TargetStrataEmbedded:
		t.proxy, t.addr, err = l.strata(ctx, target)
	default:
		err = fmt.Errorf("unknown target %q", target)
	}
	if err != nil {
		t.stop()
		return nil, fmt.Errorf("start %s: %w", target, err)
	}
	return t, nil
}
