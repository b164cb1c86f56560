package shards

import (
	"errors"
	"fmt"
	"time"

	"github.com/strata-cache/strata/placement/assign"
)

// Config is the shard-assignment loop's settings shared by every managed
// tier (the [control] section's loop knobs): the agents' report period,
// the leader's probes and waits, and shard scaling. A tier's
// AgentConfig, LeaderConfig and RunnerConfig take their fields from it.
type Config struct {
	// SessionTTL is the lease of agents and candidates: a dead strata
	// stops counting (and a dead leader is replaced) this long after it
	// died. Whole seconds, at least 1s; default 5s.
	SessionTTL time.Duration
	// ReportInterval is how often an agent ships its applied version,
	// load and unreachable servers. Default 2s.
	ReportInterval time.Duration
	// ProbeInterval is the leader's round period: a probe of every
	// member, then a Round. Default 500ms.
	ProbeInterval time.Duration
	// ProbeTimeout bounds one probe or flush; at most ProbeInterval, or
	// rounds fall behind. Default 300ms.
	ProbeTimeout time.Duration
	// Detection is how long the leader's own probe must fail before a
	// server can be declared dead; at least two ProbeIntervals, or one
	// lost probe fails a server over. Default 2s: with the round period
	// a failover completes within 3s.
	Detection time.Duration
	// Rebalance is the period of rebalancing by load and of shard
	// scaling. Default 1m.
	Rebalance time.Duration
	// Grace is the handoff window of a move. Default 10s.
	Grace time.Duration
	// MaintenanceGrace is the handoff window of a move into or out of a
	// server a maintenance walk has (admin API): its drain before a
	// restart and its return after. A key is carried over only if it is
	// read within the window, and a rolling restart moves each server's
	// shards twice, so the window should cover the time the load takes
	// to read most of a shard's keys. Longer than Grace is safe there:
	// the walk keeps the source up until the move ends, and a source
	// that dies anyway fails over as in any move. Default 30s.
	MaintenanceGrace time.Duration
	// ConvertGrace is the handoff window of a batch converting shards from
	// a compat layout (convert.go): a key is carried over only if it is
	// read within it, so it should cover the time the load takes to read
	// its working set a few times. Default 2m.
	ConvertGrace time.Duration
	// MaxMoves caps the moves of one periodic batch that balance load (a
	// draining server's shards come on top) and the replicas one scaling
	// round changes; 0: no cap. Default 256.
	MaxMoves int
	// MaxMovesPerServer caps the moves in prepare or handoff (filling
	// from their source) into one server; 0: no cap. A batch starts
	// while earlier ones are still in their grace windows when there is
	// room, so a drain takes about one grace window plus the settle hold
	// rather than one per batch. Default 1024: a server's share of the
	// default 4096 shards over four servers, so emptying one of four
	// (about 341 shards to each of the others) is never held back.
	MaxMovesPerServer int
	// MaxReplicas is the most servers a shard's reads spread over, 1
	// (scaling off) to MaxMaxReplicas. Default 1.
	MaxReplicas int
	// ReplicaBand is the reads/s per replica a scaled shard keeps within;
	// 0 <= Low < High/2, so that a split never undoes itself. Default
	// DefaultReplicaBand.
	ReplicaBand assign.Band
}

// Defaults of Config, and the bound of MaxReplicas.
const (
	DefaultSessionTTL        = 5 * time.Second
	DefaultReportInterval    = 2 * time.Second
	DefaultProbeInterval     = 500 * time.Millisecond
	DefaultProbeTimeout      = 300 * time.Millisecond
	DefaultDetection         = 2 * time.Second
	DefaultRebalance         = time.Minute
	DefaultGrace             = 10 * time.Second
	DefaultConvertGrace      = 2 * time.Minute
	DefaultMaintenanceGrace  = 30 * time.Second
	DefaultMaxMoves          = 256
	DefaultMaxMovesPerServer = 1024
	DefaultMaxReplicas       = 1
	MaxMaxReplicas           = 16
)

// DefaultReplicaBand: a memcached serves some 100 K reads/s per core; a
// shard that alone asks 20 K of one server gets help, and gives it back
// below 5 K per replica.
var DefaultReplicaBand = assign.Band{Low: 5000, High: 20000}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		SessionTTL: DefaultSessionTTL, ReportInterval: DefaultReportInterval,
		ProbeInterval: DefaultProbeInterval, ProbeTimeout: DefaultProbeTimeout,
		Detection: DefaultDetection, Rebalance: DefaultRebalance, Grace: DefaultGrace, ConvertGrace: DefaultConvertGrace,
		MaintenanceGrace: DefaultMaintenanceGrace,
		MaxMoves:         DefaultMaxMoves, MaxMovesPerServer: DefaultMaxMovesPerServer, MaxReplicas: DefaultMaxReplicas, ReplicaBand: DefaultReplicaBand,
	}
}

// FieldError is a refused value of one Config field.
type FieldError struct {
	Field string // the Config field's Go name, e.g. "ProbeTimeout"
	Err   error
}

func (e *FieldError) Error() string { return "shards: " + e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// FieldName returns Field: a configuration reader maps it onto its own key.
func (e *FieldError) FieldName() string { return e.Field }

// Validate checks c as it stands (a zero duration is refused: start from
// DefaultConfig). Each refused field is a *FieldError; several are
// joined with errors.Join, in field order.
func (c Config) Validate() error {
	var errs []error
	refuse := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Err: fmt.Errorf(format, args...)})
	}
	if c.SessionTTL < time.Second || c.SessionTTL%time.Second != 0 {
		refuse("SessionTTL", "%v: want whole seconds, at least 1s", c.SessionTTL)
	}
	for _, d := range []struct {
		field string
		v     time.Duration
	}{
		{"ReportInterval", c.ReportInterval}, {"ProbeInterval", c.ProbeInterval},
		{"ProbeTimeout", c.ProbeTimeout}, {"Detection", c.Detection},
		{"Rebalance", c.Rebalance}, {"Grace", c.Grace}, {"MaintenanceGrace", c.MaintenanceGrace}, {"ConvertGrace", c.ConvertGrace},
	} {
		if d.v <= 0 {
			refuse(d.field, "%v: must be positive", d.v)
		}
	}
	if c.ProbeTimeout > c.ProbeInterval {
		refuse("ProbeTimeout", "%v: at most the probe interval (%v)", c.ProbeTimeout, c.ProbeInterval)
	}
	if c.Detection < 2*c.ProbeInterval {
		refuse("Detection", "%v: at least two probe intervals (%v), or one lost probe fails a server over", c.Detection, 2*c.ProbeInterval)
	}
	if c.MaxMoves < 0 {
		refuse("MaxMoves", "%d: want 0 (no cap) or more", c.MaxMoves)
	}
	if c.MaxMovesPerServer < 0 {
		refuse("MaxMovesPerServer", "%d: want 0 (no cap) or more", c.MaxMovesPerServer)
	}
	if c.MaxReplicas < 1 || c.MaxReplicas > MaxMaxReplicas {
		refuse("MaxReplicas", "%d: want 1 (scaling off) to %d", c.MaxReplicas, MaxMaxReplicas)
	}
	if _, err := assign.Replicas(nil, nil, c.ReplicaBand, 2); err != nil {
		refuse("ReplicaBand", "[%v, %v]: want 0 <= low < high/2 (a split must not undo itself)", c.ReplicaBand.Low, c.ReplicaBand.High)
	}
	return errors.Join(errs...)
}

// SessionSeconds is SessionTTL in the whole seconds a store lease takes
// (AgentConfig.SessionTTL, RunnerConfig.SessionTTL).
func (c Config) SessionSeconds() int { return int(c.SessionTTL / time.Second) }
