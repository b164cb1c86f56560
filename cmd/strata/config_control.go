package main

import (
	"net"
	"time"

	"github.com/strata-cache/strata/placement/assign"
)

// controlSection is [control]: the control plane's state store and the
// shard-assignment loop's knobs. It acts on the tiers marked managed.
type controlSection struct {
	Etcd              []string  `toml:"etcd" json:"etcd"`
	Leader            *bool     `toml:"leader" json:"leader"`
	SessionTTL        duration  `toml:"session_ttl" json:"session_ttl"`
	ReportInterval    duration  `toml:"report_interval" json:"report_interval"`
	ProbeInterval     duration  `toml:"probe_interval" json:"probe_interval"`
	ProbeTimeout      duration  `toml:"probe_timeout" json:"probe_timeout"`
	Detection         duration  `toml:"detection" json:"detection"`
	RebalanceInterval duration  `toml:"rebalance_interval" json:"rebalance_interval"`
	Grace             duration  `toml:"grace" json:"grace"`
	MaxMoves          *int64    `toml:"max_moves" json:"max_moves"`
	ReplicaBand       []float64 `toml:"replica_band" json:"replica_band"`
	MaxReplicas       *int64    `toml:"max_replicas" json:"max_replicas"`
}

// controlSettings is [control] resolved.
type controlSettings struct {
	// Enabled: the file has a [control] section. Without one, a managed
	// pool waits for maps published by other means (as before there was
	// a control plane).
	Enabled    bool
	Etcd       []string // empty: the in-memory store
	Leader     bool     // this process campaigns for the managed tiers
	SessionTTL int      // seconds
	Report     time.Duration
	Probe      time.Duration
	ProbeTO    time.Duration
	Detection  time.Duration
	Rebalance  time.Duration
	Grace      time.Duration
	MaxMoves   int
	// MaxReplicas is the most servers a shard's reads spread over (1:
	// scaling off); ReplicaBand the reads/s per replica it keeps within.
	MaxReplicas int
	ReplicaBand assign.Band
}

// Defaults of [control]. Detection: a server whose probe fails for 2s (4
// probes at 500ms) and that the agents cannot reach is failed over; with
// the round period the whole failover stays within 3s.
const (
	defaultSessionTTL     = 5 * time.Second
	defaultReportInterval = 2 * time.Second
	defaultProbeInterval  = 500 * time.Millisecond
	defaultProbeTimeout   = 300 * time.Millisecond
	defaultDetection      = 2 * time.Second
	defaultRebalance      = time.Minute
	defaultGrace          = 10 * time.Second
	defaultMaxMoves       = 256
	defaultMaxReplicas    = 1
	maxMaxReplicas        = 16
)

// defaultReplicaBand: a memcached serves some 100 K reads/s per core; a
// shard that alone asks 20 K of one server gets help, and gives it back
// below 5 K per replica (low < high/2, so a split never undoes itself).
var defaultReplicaBand = []float64{5000, 20000}

// resolveControl fills [control]'s defaults and checks it.
func resolveControl(c *controlSection, bad func(string, string, ...any)) controlSettings {
	fill := func(d *duration, def time.Duration) {
		if *d == 0 {
			*d = duration(def)
		}
	}
	fill(&c.SessionTTL, defaultSessionTTL)
	fill(&c.ReportInterval, defaultReportInterval)
	fill(&c.ProbeInterval, defaultProbeInterval)
	fill(&c.ProbeTimeout, defaultProbeTimeout)
	fill(&c.Detection, defaultDetection)
	fill(&c.RebalanceInterval, defaultRebalance)
	fill(&c.Grace, defaultGrace)
	if c.Leader == nil {
		t := true
		c.Leader = &t
	}
	if c.MaxMoves == nil {
		m := int64(defaultMaxMoves)
		c.MaxMoves = &m
	}
	if c.Etcd == nil {
		c.Etcd = []string{}
	}
	if c.MaxReplicas == nil {
		m := int64(defaultMaxReplicas)
		c.MaxReplicas = &m
	}
	if c.ReplicaBand == nil {
		c.ReplicaBand = append([]float64(nil), defaultReplicaBand...)
	}
	var band assign.Band
	if len(c.ReplicaBand) != 2 {
		bad("control.replica_band", "%v: want [low, high] reads/s per replica", c.ReplicaBand)
	} else if band = (assign.Band{Low: c.ReplicaBand[0], High: c.ReplicaBand[1]}); !validBand(band) {
		bad("control.replica_band", "%v: want 0 <= low < high/2 (a split must not undo itself)", c.ReplicaBand)
	}
	if *c.MaxReplicas < 1 || *c.MaxReplicas > maxMaxReplicas {
		bad("control.max_replicas", "%d: want 1 (scaling off) to %d", *c.MaxReplicas, maxMaxReplicas)
	}
	for _, k := range []struct {
		key string
		d   duration
	}{
		{"control.session_ttl", c.SessionTTL}, {"control.report_interval", c.ReportInterval},
		{"control.probe_interval", c.ProbeInterval}, {"control.probe_timeout", c.ProbeTimeout},
		{"control.detection", c.Detection}, {"control.rebalance_interval", c.RebalanceInterval},
		{"control.grace", c.Grace},
	} {
		if k.d < 0 {
			bad(k.key, "%v: must be positive", time.Duration(k.d))
		}
	}
	if time.Duration(c.SessionTTL) < time.Second || time.Duration(c.SessionTTL)%time.Second != 0 {
		bad("control.session_ttl", "%v: want whole seconds, at least 1s", time.Duration(c.SessionTTL))
	}
	if c.ProbeTimeout > c.ProbeInterval {
		bad("control.probe_timeout", "%v: at most probe_interval (%v)", time.Duration(c.ProbeTimeout), time.Duration(c.ProbeInterval))
	}
	if c.Detection < 2*c.ProbeInterval {
		bad("control.detection", "%v: at least two probe intervals (%v), or one lost probe fails a server over", time.Duration(c.Detection), 2*time.Duration(c.ProbeInterval))
	}
	if *c.MaxMoves < 0 {
		bad("control.max_moves", "%d: want 0 (no cap) or more", *c.MaxMoves)
	}
	for i, ep := range c.Etcd {
		if _, _, err := net.SplitHostPort(ep); err != nil {
			bad("control.etcd", "entry %d %q: want host:port", i+1, ep)
		}
	}
	return controlSettings{
		Etcd: c.Etcd, Leader: *c.Leader, SessionTTL: int(time.Duration(c.SessionTTL) / time.Second),
		Report: time.Duration(c.ReportInterval), Probe: time.Duration(c.ProbeInterval),
		ProbeTO: time.Duration(c.ProbeTimeout), Detection: time.Duration(c.Detection),
		Rebalance: time.Duration(c.RebalanceInterval), Grace: time.Duration(c.Grace),
		MaxMoves: int(*c.MaxMoves), MaxReplicas: int(*c.MaxReplicas), ReplicaBand: band,
	}
}

// validBand reports whether shard scaling accepts b.
func validBand(b assign.Band) bool {
	_, err := assign.Replicas(nil, nil, b, 2)
	return err == nil
}
