package compare

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/bench/proc"
	"github.com/strata-cache/strata/bench/workload"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/testbin"
)

func TestMissingBinariesAreNamed(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("PATH", empty)
	cases := []struct {
		targets []string
		bins    Binaries
		name    string
	}{
		{[]string{TargetMemcached}, Binaries{}, "memcached"},
		{[]string{TargetTwemproxy}, Binaries{Memcached: "/bin/true"}, "nutcracker"},
		{[]string{TargetStrataEmbedded}, Binaries{}, "strata"},
		{[]string{TargetStrataSingle}, Binaries{Memcached: "/bin/true", Strata: empty + "/strata"}, "strata"},
	}
	for _, c := range cases {
		err := c.bins.resolve(c.targets)
		var mb *MissingBinaryError
		if !errors.As(err, &mb) || mb.Name != c.name || !strings.Contains(err.Error(), c.name) {
			t.Errorf("targets %v: got %v, want a MissingBinaryError naming %s", c.targets, err, c.name)
		}
	}
	if err := (&Binaries{}).resolve([]string{"redis"}); err == nil {
		t.Error("unknown target accepted")
	}
}

func testWorkload(t *testing.T) *workload.Workload {
	t.Helper()
	p, _ := workload.Builtin("getset-90-10")
	p.Families[0].Keys = 1000
	w, err := workload.New(p)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func needNutcracker(t *testing.T) {
	t.Helper()
	memcachedtest.Binary(t)
	if _, err := exec.LookPath("nutcracker"); err != nil {
		t.Fatalf("nutcracker not installed (Debian package nutcracker): %v", err)
	}
}

// Two rounds, the second in reverse order; each row keeps both rounds.
func TestCompareMemcachedAndTwemproxy(t *testing.T) {
	needNutcracker(t)
	var log strings.Builder
	rep, err := Run(context.Background(), Config{
		Workload: testWorkload(t), Targets: []string{TargetMemcached, TargetTwemproxy},
		Duration: 300 * time.Millisecond, Conns: 4, Pipelines: []int{1, 4}, MemcachedMB: 64, Rounds: 2, Log: &log,
	}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 4 {
		t.Fatalf("%d rows, want 2 targets × 2 depths", len(rep.Rows))
	}
	var proxyCPU float64
	for _, row := range rep.Rows {
		if row.Err != "" || row.Result == nil || row.Result.Requests == 0 || row.Result.Misses != 0 {
			t.Fatalf("%s at %d: %+v", row.Target, row.Pipeline, row)
		}
		if row.Rounds != 2 || len(row.RoundOps) != 2 || len(row.RoundCPUPerM) != 2 || !slices.Contains(row.RoundOps, row.Result.OpsPerSec) {
			t.Errorf("%s at %d: rounds %d, per round %v %v, result %v ops/s", row.Target, row.Pipeline, row.Rounds, row.RoundOps, row.RoundCPUPerM, row.Result.OpsPerSec)
		}
		if row.ProxyCPUSeconds < 0 || row.BackendCPUSeconds < 0 {
			t.Errorf("%s: negative CPU time", row.Target)
		}
		proxyCPU += row.ProxyCPUSeconds
		switch row.Target {
		case TargetMemcached:
			if row.VsMemcached != 1 || row.CPUVsMemcached != 1 || row.BackendCPUSeconds != 0 {
				t.Errorf("memcached row: ratios %v, %v, backend cpu %v", row.VsMemcached, row.CPUVsMemcached, row.BackendCPUSeconds)
			}
		case TargetTwemproxy:
			if row.VsTwemproxy != 1 || row.CPUVsTwemproxy != 1 || row.VsMemcached <= 0 || row.CPUVsMemcached <= 0 {
				t.Errorf("twemproxy row: ratios %v, %v, %v, %v", row.VsTwemproxy, row.CPUVsTwemproxy, row.VsMemcached, row.CPUVsMemcached)
			}
		}
	}
	if proxyCPU <= 0 {
		t.Error("no CPU time measured for the servers under load")
	}
	var starts []string
	for _, line := range strings.Split(log.String(), "\n") {
		if strings.Contains(line, "starting") {
			starts = append(starts, line)
		}
	}
	wantStarts := []string{"round 1: starting memcached", "round 1: starting twemproxy", "round 2: starting twemproxy", "round 2: starting memcached"}
	if !slices.Equal(starts, wantStarts) {
		t.Errorf("targets started %q, want %q", starts, wantStarts)
	}
	var out strings.Builder
	if err := rep.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pipeline depth 1", "pipeline depth 4", "twemproxy", "× memcached", "cpu × twemproxy", "2 interleaved rounds"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

func gone(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return os.IsNotExist(err)
}

// Every process the launcher starts is gone once it stops them.
func TestLauncherStopsEveryChild(t *testing.T) {
	needNutcracker(t)
	b := Binaries{}
	if err := b.resolve([]string{TargetTwemproxy}); err != nil {
		t.Fatal(err)
	}
	l := &launcher{bins: b, dir: t.TempDir(), memcachedMB: 64, readyWithin: 10 * time.Second}
	topo, err := l.setup(context.Background(), TargetTwemproxy)
	if err != nil {
		t.Fatal(err)
	}
	pids := []int{topo.proxy.Pid(), topo.backends[0].Pid()}
	if proc.Probe(topo.addr) != nil {
		t.Fatal("twemproxy not answering")
	}
	l.stopAll()
	l.stopAll() // idempotent
	for _, pid := range pids {
		if !gone(pid) {
			t.Errorf("process %d still exists after stopAll", pid)
		}
	}
}

// A target whose server cannot start is reported in its row, the run goes
// on, and Run returns ErrTargetFailed.
func TestFailingTargetIsReported(t *testing.T) {
	memcachedtest.Binary(t)
	falseBin := testbin.Require(t, "coreutils", "STRATA_SKIP_COREUTILS", "false")
	rep, err := Run(context.Background(), Config{
		Binaries: Binaries{Strata: falseBin}, Workload: testWorkload(t),
		Targets:  []string{TargetStrataEmbedded, TargetMemcached},
		Duration: 200 * time.Millisecond, Conns: 2, Pipelines: []int{1}, MemcachedMB: 64,
	}, time.Unix(0, 0))
	if !errors.Is(err, ErrTargetFailed) {
		t.Fatalf("got %v, want ErrTargetFailed", err)
	}
	if len(rep.Rows) != 2 || rep.Rows[0].Result != nil || !strings.Contains(rep.Rows[0].Err, "exited") {
		t.Fatalf("failed row: %+v", rep.Rows)
	}
	if rep.Rows[1].Result == nil || rep.Rows[1].Result.Requests == 0 {
		t.Errorf("memcached was not measured after the failure: %+v", rep.Rows[1])
	}
}

func TestCancelledCompareStartsNothing(t *testing.T) {
	memcachedtest.Binary(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, Config{Workload: testWorkload(t), Targets: []string{TargetMemcached}, Duration: time.Second}, time.Unix(0, 0))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

// With Idle set, each target is first measured with no clients, and the
// table shows it; an idle memcached spends next to nothing.
func TestIdleIsMeasuredBeforeTheLoad(t *testing.T) {
	memcachedtest.Binary(t)
	rep, err := Run(context.Background(), Config{
		Workload: testWorkload(t), Targets: []string{TargetMemcached},
		Duration: 200 * time.Millisecond, Conns: 2, Pipelines: []int{1}, MemcachedMB: 64, Idle: time.Second,
	}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Idle) != 1 || len(rep.Rows) != 1 {
		t.Fatalf("%d idle rows and %d rows, want 1 and 1", len(rep.Idle), len(rep.Rows))
	}
	if r := rep.Idle[0]; r.Target != TargetMemcached || r.Err != "" || r.Seconds != 1 || r.CPUMsPerSec < 0 || r.CPUMsPerSec > 50 || r.SlicesPerSec < 0 {
		t.Fatalf("idle row %+v", r)
	}
	var out strings.Builder
	if err := rep.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "idle (no clients)") || !strings.Contains(out.String(), "wakeups/s") {
		t.Errorf("table lacks the idle section:\n%s", out.String())
	}
}
