package compare

import (
	"context"
	"testing"
	"time"

	"github.com/strata-cache/strata/bench/workload"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/testbin"
)

// BenchmarkIdleCPU reports what an idle strata on its embedded default
// costs (CPU milliseconds and thread wake-ups a second, over 10 s with no
// client), beside memcached in the same run, so that `make bench` shows a
// regression of the idle cost. It reports and does not assert: on a
// shared machine the figure moves with the load (see docs/benchmarks.md),
// and a timing assertion would be flaky. One 10 s measurement, whatever
// b.N.
func BenchmarkIdleCPU(b *testing.B) {
	memcachedtest.Binary(b)
	bin := testbin.BuildStrata(b)
	p, _ := workload.Builtin("getset-90-10")
	p.Families[0].Keys = 1000
	w, err := workload.New(p)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		rep, err := Run(context.Background(), Config{
			Binaries: Binaries{Strata: bin}, Workload: w,
			Targets:  []string{TargetMemcached, TargetStrataEmbedded},
			Duration: 100 * time.Millisecond, Conns: 1, Pipelines: []int{1}, MemcachedMB: 64, Idle: 10 * time.Second,
		}, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range rep.Idle {
			if r.Err != "" {
				b.Fatalf("%s: %s", r.Target, r.Err)
			}
			b.ReportMetric(r.CPUMsPerSec, r.Target+"-cpu-ms/s")
			b.ReportMetric(r.SlicesPerSec, r.Target+"-wakeups/s")
		}
	}
}
