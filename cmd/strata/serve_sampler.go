package main

import (
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/sampler"
)

// samplerProxyOptions connect the sampler to the proxy, which checks every
// request's key against it and records the accesses of sampled keys. The
// sampler is always connected: rate 0 makes the check a single atomic load,
// and the admin API can turn sampling on while strata serves.
func samplerProxyOptions(s *sampler.Sampler) []proxy.Option {
	return []proxy.Option{proxy.WithSampler(s)}
}
