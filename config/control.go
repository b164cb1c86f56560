package config

import (
	"net"
	"time"

	"github.com/strata-cache/strata/control/shards"
	"github.com/strata-cache/strata/internal/configfile"
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
	ConvertGrace      duration  `toml:"convert_grace" json:"convert_grace"`
	MaintenanceGrace  duration  `toml:"maintenance_grace" json:"maintenance_grace"`
	MaxMoves          *int64    `toml:"max_moves" json:"max_moves"`
	MaxMovesPerServer *int64    `toml:"max_moves_per_server" json:"max_moves_per_server"`
	ReplicaBand       []float64 `toml:"replica_band" json:"replica_band"`
	MaxReplicas       *int64    `toml:"max_replicas" json:"max_replicas"`
}

// ControlSettings is [control] resolved.
type ControlSettings struct {
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
	Convert    time.Duration // ConvertGrace
	Maint      time.Duration // MaintenanceGrace
	MaxMoves   int
	PerServer  int // max_moves_per_server
	// MaxReplicas is the most servers a shard's reads spread over (1:
	// scaling off); ReplicaBand the reads/s per replica it keeps within.
	MaxReplicas int
	ReplicaBand assign.Band
}

// controlKeys maps the fields of shards.Config onto [control]'s keys.
var controlKeys = fieldKeys{
	"SessionTTL": "control.session_ttl", "ReportInterval": "control.report_interval",
	"ProbeInterval": "control.probe_interval", "ProbeTimeout": "control.probe_timeout",
	"Detection": "control.detection", "Rebalance": "control.rebalance_interval", "Grace": "control.grace",
	"MaxMoves": "control.max_moves", "MaxMovesPerServer": "control.max_moves_per_server", "MaxReplicas": "control.max_replicas", "ReplicaBand": "control.replica_band",
	"ConvertGrace": "control.convert_grace", "MaintenanceGrace": "control.maintenance_grace",
}

var _ fieldError = (*shards.FieldError)(nil)

// resolveControl maps [control] onto shards.Config, which judges the loop's
// knobs; the store's endpoints and leader are the file's own. The section
// is left as in force.
func resolveControl(c *controlSection, r *resolver) ControlSettings {
	cfg := shards.DefaultConfig()
	for _, d := range []struct {
		to *time.Duration
		v  *duration
	}{
		{&cfg.SessionTTL, &c.SessionTTL}, {&cfg.ReportInterval, &c.ReportInterval}, {&cfg.ProbeInterval, &c.ProbeInterval},
		{&cfg.ProbeTimeout, &c.ProbeTimeout}, {&cfg.Detection, &c.Detection}, {&cfg.Rebalance, &c.RebalanceInterval}, {&cfg.Grace, &c.Grace},
		{&cfg.ConvertGrace, &c.ConvertGrace}, {&cfg.MaintenanceGrace, &c.MaintenanceGrace},
	} {
		if *d.v != 0 { // zero: not given
			*d.to = time.Duration(*d.v)
		}
		*d.v = configfile.Duration(*d.to)
	}
	if c.MaxMoves != nil {
		cfg.MaxMoves = int(*c.MaxMoves)
	}
	cfg.MaxMovesPerServer = int(given(&c.MaxMovesPerServer, int64(cfg.MaxMovesPerServer)))
	if c.MaxReplicas != nil {
		cfg.MaxReplicas = int(*c.MaxReplicas)
	}
	switch {
	case c.ReplicaBand == nil:
		c.ReplicaBand = []float64{cfg.ReplicaBand.Low, cfg.ReplicaBand.High}
	case len(c.ReplicaBand) != 2:
		r.bad("control.replica_band", "%v: want [low, high] reads/s per replica", c.ReplicaBand)
	default:
		cfg.ReplicaBand = assign.Band{Low: c.ReplicaBand[0], High: c.ReplicaBand[1]}
	}
	r.fields(cfg.Validate(), controlKeys, "control")
	c.MaxMoves, c.MaxReplicas = new(int64(cfg.MaxMoves)), new(int64(cfg.MaxReplicas))
	given(&c.Leader, true)
	if c.Etcd == nil {
		c.Etcd = []string{}
	}
	for i, ep := range c.Etcd {
		if _, _, err := net.SplitHostPort(ep); err != nil {
			r.bad("control.etcd", "entry %d %q: want host:port", i+1, ep)
		}
	}
	return ControlSettings{
		Etcd: c.Etcd, Leader: *c.Leader, SessionTTL: cfg.SessionSeconds(),
		Report: cfg.ReportInterval, Probe: cfg.ProbeInterval, ProbeTO: cfg.ProbeTimeout, Detection: cfg.Detection,
		Rebalance: cfg.Rebalance, Grace: cfg.Grace, Convert: cfg.ConvertGrace, MaxMoves: cfg.MaxMoves, MaxReplicas: cfg.MaxReplicas, ReplicaBand: cfg.ReplicaBand,
		PerServer: cfg.MaxMovesPerServer, Maint: cfg.MaintenanceGrace,
	}
}
