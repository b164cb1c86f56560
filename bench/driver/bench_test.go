package driver

import (
	"context"
	"testing"

	"github.com/strata-cache/strata/bench/workload"
	"github.com/strata-cache/strata/internal/memcachedtest"
)

// BenchmarkClosedLoop measures the driver's own cost per request against a
// real memcached (b.N requests, 4 connections, depth 16).
func BenchmarkClosedLoop(b *testing.B) {
	srv := memcachedtest.Start(b)
	p, _ := workload.Builtin("getset-90-10")
	w, err := workload.New(p)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	res, err := Run(context.Background(), Config{Target: srv.Addr, Workload: w, Conns: 4, Pipeline: 16, Requests: int64(b.N)})
	if err != nil {
		b.Fatal(err)
	}
	if res.Requests != int64(b.N) {
		b.Fatalf("%d of %d answered", res.Requests, b.N)
	}
}
