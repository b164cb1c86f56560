package memcached

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/strata-cache/strata/internal/tlsconn"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// Server is one memcached server of a pool.
type Server struct {
	// Addr is host:port.
	Addr string
	// Weight is the server's relative share of shards, 1 to MaxWeight.
	// New reads zero as 1 (Validate, which judges a Config as it stands,
	// refuses it).
	Weight int
	// Name is the server's name in a twemproxy layout (Config.Compat),
	// hashed there instead of host:port. Only twemproxy has names.
	Name string
}

// DefaultSeed is the router's hash seed when Config.Seed is zero. It must
// differ from the sampler's seed, or the sampled keys would all sit on a
// few servers.
const DefaultSeed = 0x7374_7261_7461_2d72 // "strata-r"

// Config is a pool's configuration. The zero value of each field means its
// documented default; validate fills them in.
type Config struct {
	// Servers is the pool. Required.
	Servers []Server
	// Shards is S: keys hash into S shards and shards map to servers.
	// Fixed for the life of the pool (every strata of a region must use the
	// same S and Seed to agree on where a key lives). Default 4096.
	Shards int
	// Seed is the router's hash seed. Default DefaultSeed.
	Seed uint64

	// TLS reaches the servers over TLS (memcached -Z); the zero value is
	// plaintext. The files are read by New.
	TLS tlsconn.Dial
	// DialTimeout bounds connecting to a server, and each health probe's
	// connect. Default 1s.
	DialTimeout time.Duration
	// RequestTimeout bounds the wait for a reply. memcached on a LAN
	// answers in well under a millisecond; the default, 250ms, leaves room
	// for a garbage-collection pause or a busy host on either side and
	// still fails long before a client's own timeout (typically 0.5–1s)
	// would. It is enforced with the granularity of the pool's tick,
	// RequestTimeout/5 clamped to 5–100ms, so a request fails between
	// RequestTimeout and RequestTimeout plus one tick after it was issued.
	RequestTimeout time.Duration
	// FailureThreshold is how many failures in a row (failed connects,
	// timeouts, connections lost with requests in flight) mark a server
	// down. Default 3.
	FailureThreshold int
	// ProbeInterval is how often a down server is probed (connect and
	// "version"). Default 1s.
	ProbeInterval time.Duration
	// Managed hands the shard map to a control plane: the map changes only
	// through ApplyTopology, and Servers (then SetServers) is membership
	// only. Fixed for the life of the pool. Off by default: the map is the
	// rendezvous map of Servers.
	Managed bool
	// RehashOnDown sends the shards of a down server to the next server in
	// rendezvous order instead of failing them. Off by default: when the
	// server returns, it would serve values that were overwritten on the
	// other server meanwhile.
	RehashOnDown bool
	// FlushOnReturn flushes a server that returns from down before it
	// serves again (flush_all, once the requests it may still hold from
	// before have run; see returning.go). An L1 pool needs it: while a
	// server is down, writes skip invalidating its copies. It is implied
	// by RehashOnDown, whose writes went to other servers meanwhile. Off
	// otherwise: a pool of record keeps its data, as no write to a down
	// server was acknowledged. With it, a write that fails while the
	// server is up (timed out, refused, answered with an error) marks the
	// server down at once, whatever FailureThreshold says: the write may
	// run late or not at all, and only a return makes that safe.
	FlushOnReturn bool
	// ReturnTimeout bounds the returning protocol of one answered probe;
	// a server that cannot be made safe within it is down again until the
	// next probe. Default 30s.
	ReturnTimeout time.Duration
	// MoveLeaseTTL is the life of the placeholder a handoff read leaves at
	// a moving shard's destination while it copies the value from the
	// source (mg N; see move.go), in whole seconds. A fill that fails
	// removes its placeholder, but one whose proxy died stays until it
	// expires, and a plain get would read it as an empty value: so the
	// control plane keeps a move in settle at least this long before it
	// publishes the final map, so it is also the settle hold every move
	// (a drain's included) waits out after its grace window. It must
	// outlast one fill (a lease, a read of the source and a store: three
	// replies, each bounded by RequestTimeout); one that outlives it
	// loses its lease and answers a miss, never a stale value. Default
	// 2s; 1s to 10 minutes.
	MoveLeaseTTL time.Duration

	// MaxPendingPerConn bounds the requests written (or about to be) and
	// awaiting replies on one backend connection (one per event loop and
	// server); past it requests wait, in order, and are written as replies
	// free room. Default 4096.
	MaxPendingPerConn int
	// MaxBufferedBytesPerConn bounds the encoded bytes of those requests,
	// the same way. Default 8 MiB; at least MaxItemSize + 1 KiB so one
	// item always fits.
	MaxBufferedBytesPerConn int
	// MaxItemSize is the largest value the pool sends or accepts back. A
	// larger set fails at once with StatusTooLarge. Default 1 MiB,
	// memcached's default -I.
	MaxItemSize int

	// Compat places keys as an incumbent does instead of by the shard map,
	// so that strata can serve a fleet the incumbent filled without a miss
	// storm: "twemproxy", "libmemcached-ketama", "pymemcache",
	// "python-memcached", "gomemcache", "mcrouter-ch3" or "mcrouter-crc32"
	// (tiers/memcached/compat says what each reproduces). Servers must then
	// be listed in the incumbent's order. Off (empty) by default. A Managed
	// compat pool serves by the layout until its control plane converts it
	// to a published map, warm (compat.go).
	Compat string
	// Distribution, Hash and HashTag are the incumbent's settings of those
	// names, for the schemes that have them: twemproxy's distribution
	// (ketama, the default, or modula), hash (default fnv1a_64) and
	// hash_tag; libmemcached-ketama's distribution (ketama or
	// ketama_weighted) and key hash (default one_at_a_time, or md5 under
	// ketama_weighted). Empty means the incumbent's default; a setting the
	// scheme does not have is refused.
	Distribution string
	Hash         string
	HashTag      string
	// CompatSeed is pymemcache's RendezvousHash seed (default 0).
	CompatSeed uint32
	// ConvertFrom, on a Managed compat pool, is the compat layout the
	// pool's keys are on now, when Compat names the one they are to be on:
	// the control plane converts the pool from the one to the other, warm,
	// shard by shard (convert.go). Nil (the default): a managed compat
	// pool converts to the control plane's own map.
	ConvertFrom *PriorLayout

	// Logger receives the rare events: a server marked down or back up.
	// Default slog.Default().
	Logger *slog.Logger
}

// Defaults.
const (
	DefaultShards           = 4096
	DefaultDialTimeout      = time.Second
	DefaultRequestTimeout   = 250 * time.Millisecond
	DefaultFailureThreshold = 3
	DefaultProbeInterval    = time.Second
	DefaultReturnTimeout    = 30 * time.Second
	DefaultMaxPending       = 4096
	DefaultMaxBuffered      = 8 << 20
	DefaultMaxItemSize      = 1 << 20
	// DefaultMoveLeaseTTL: memcached counts TTLs in whole seconds, so a
	// 2s placeholder lives between 1s and 2s, beyond the 750ms a fill can
	// take at the default RequestTimeout.
	DefaultMoveLeaseTTL = 2 * time.Second
)

// Bounds of the options, beyond the positive minimum of each: a wait
// longer than these is a mistake in a configuration, not a choice.
const (
	MaxDialTimeout      = time.Minute
	MaxRequestTimeout   = time.Minute
	MaxProbeInterval    = time.Hour
	MaxReturnTimeout    = time.Hour
	MaxFailureThreshold = 1000
	MaxMoveLeaseTTL     = 10 * time.Minute
	// MaxWeight bounds Server.Weight: a thousand to one is already a
	// pool no one means to build.
	MaxWeight = 1000
)

// FieldError is a refused value of one Config field.
type FieldError struct {
	Field string // the Config field's Go name, e.g. "FailureThreshold"
	Err   error
}

func (e *FieldError) Error() string { return "memcached: " + e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// FieldName returns Field: a configuration reader maps it onto its own key.
func (e *FieldError) FieldName() string { return e.Field }

// DefaultConfig returns the documented defaults, with no servers and no
// logger.
func DefaultConfig() Config {
	c := Config{}
	c.setDefaults()
	c.Logger = nil
	return c
}

// setDefaults fills the zero fields with their defaults.
func (c *Config) setDefaults() {
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{
		{&c.DialTimeout, DefaultDialTimeout}, {&c.RequestTimeout, DefaultRequestTimeout},
		{&c.ProbeInterval, DefaultProbeInterval}, {&c.ReturnTimeout, DefaultReturnTimeout},
		{&c.MoveLeaseTTL, DefaultMoveLeaseTTL},
	} {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	for _, n := range []struct {
		v   *int
		def int
	}{
		{&c.Shards, DefaultShards}, {&c.FailureThreshold, DefaultFailureThreshold},
		{&c.MaxPendingPerConn, DefaultMaxPending}, {&c.MaxItemSize, DefaultMaxItemSize},
		{&c.MaxBufferedBytesPerConn, DefaultMaxBuffered},
	} {
		if *n.v == 0 {
			*n.v = n.def
		}
	}
	if c.Seed == 0 {
		c.Seed = DefaultSeed
	}
	c.Servers = defaultWeights(c.Servers)
	if c.ConvertFrom != nil {
		pl := *c.ConvertFrom
		pl.Servers = defaultWeights(pl.Servers)
		c.ConvertFrom = &pl
	}
	if c.RehashOnDown {
		c.FlushOnReturn = true
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// defaultWeights returns a copy of list with weight 0 read as 1.
func defaultWeights(list []Server) []Server {
	if list == nil {
		return nil
	}
	out := make([]Server, len(list))
	for i, s := range list {
		if s.Weight == 0 {
			s.Weight = 1
		}
		out[i] = s
	}
	return out
}

// Validate reports every field of c, as it stands, that New would refuse:
// a zero is refused where the field has a default (New fills the
// defaults of zero fields before it validates; Validate does not, so that
// a configuration file's explicit 0 is refused, not taken for "default").
// Each refused field is a *FieldError, joined with errors.Join when there
// are several.
func (c Config) Validate() error {
	var errs []error
	refuse := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Err: fmt.Errorf(format, args...)})
	}
	if _, err := checkServers(c.Servers); err != nil {
		refuse("Servers", "%s", strings.TrimPrefix(err.Error(), "memcached: "))
	} else {
		for _, s := range c.Servers {
			if s.Weight == 0 {
				refuse("Servers", "server %s: weight 0 is out of range: 1 to %d", s.Addr, MaxWeight)
			}
		}
	}
	var tfe *tlsconn.FieldError
	if err := c.TLS.Validate(); errors.As(err, &tfe) {
		errs = append(errs, &FieldError{Field: "TLS." + tfe.Field, Err: tfe.Err})
	}
	if c.Shards < 1 || c.Shards > shardmap.MaxShards {
		refuse("Shards", "%d is out of range: 1 to %d", c.Shards, shardmap.MaxShards)
	}
	for _, d := range []struct {
		field string
		v, hi time.Duration
	}{
		{"DialTimeout", c.DialTimeout, MaxDialTimeout},
		{"RequestTimeout", c.RequestTimeout, MaxRequestTimeout},
		{"ProbeInterval", c.ProbeInterval, MaxProbeInterval},
		{"ReturnTimeout", c.ReturnTimeout, MaxReturnTimeout},
	} {
		if d.v < time.Millisecond || d.v > d.hi {
			refuse(d.field, "%v is out of range: 1ms to %v", d.v, d.hi)
		}
	}
	for _, n := range []struct {
		field string
		v, hi int
	}{
		{"FailureThreshold", c.FailureThreshold, MaxFailureThreshold},
		{"MaxPendingPerConn", c.MaxPendingPerConn, math.MaxInt32},
		{"MaxItemSize", c.MaxItemSize, 1 << 30}, // memcached stores at most 1GiB
		{"MaxBufferedBytesPerConn", c.MaxBufferedBytesPerConn, math.MaxInt},
	} {
		if n.v < 1 || n.v > n.hi {
			refuse(n.field, "%d is out of range: 1 to %d", n.v, n.hi)
		}
	}
	if len(errs) == 0 && c.MaxBufferedBytesPerConn < c.MaxItemSize+1024 {
		refuse("MaxBufferedBytesPerConn", "%d: want at least max item size + 1KiB (%d)",
			c.MaxBufferedBytesPerConn, c.MaxItemSize+1024)
	}
	if c.MoveLeaseTTL < time.Second || c.MoveLeaseTTL > MaxMoveLeaseTTL || c.MoveLeaseTTL%time.Second != 0 {
		refuse("MoveLeaseTTL", "%v: want whole seconds from 1s to %v", c.MoveLeaseTTL, MaxMoveLeaseTTL)
	}
	errs = append(errs, c.compatErrors()...)
	return errors.Join(errs...)
}

// validate fills the defaults, refuses values out of range (reporting
// every refused option, not only the first) and defaults the servers'
// weights.
func (c *Config) validate() error {
	c.setDefaults()
	if err := c.Validate(); err != nil {
		return err
	}
	c.Servers, _ = checkServers(c.Servers)
	return nil
}

// checkServers validates a server list and returns a copy with weights
// defaulted.
func checkServers(list []Server) ([]Server, error) {
	if len(list) == 0 {
		return nil, fmt.Errorf("memcached: a pool needs at least one server")
	}
	if len(list) > shardmap.MaxServers {
		return nil, fmt.Errorf("memcached: %d servers: at most %d", len(list), shardmap.MaxServers)
	}
	out := make([]Server, len(list))
	seen := make(map[string]bool, len(list))
	for i, s := range list {
		if err := CheckAddress(s.Addr); err != nil {
			return nil, fmt.Errorf("memcached: %w", err)
		}
		if seen[s.Addr] {
			return nil, fmt.Errorf("memcached: %s is listed twice", s.Addr)
		}
		seen[s.Addr] = true
		if s.Weight < 0 || s.Weight > MaxWeight {
			return nil, fmt.Errorf("memcached: server %s: weight %d is out of range: 1 to %d", s.Addr, s.Weight, MaxWeight)
		}
		if s.Weight == 0 {
			s.Weight = 1
		}
		out[i] = s
	}
	return out, nil
}

// tickFor is the period of the timeout checks for a request timeout.
func tickFor(timeout time.Duration) time.Duration {
	return min(max(timeout/5, 5*time.Millisecond), 100*time.Millisecond)
}

func mapServers(list []Server) []shardmap.Server {
	out := make([]shardmap.Server, len(list))
	for i, s := range list {
		out[i] = shardmap.Server{Addr: s.Addr, Weight: s.Weight}
	}
	return out
}

// MoveLeaseTTL is the pool's fill lease TTL (Config.MoveLeaseTTL, after
// defaults): the least time a control plane must hold a batch in settle.
func (p *Pool) MoveLeaseTTL() time.Duration { return p.cfg.MoveLeaseTTL }

// CheckAddress reports whether addr can be dialled as a server: host:port,
// with a host and a port in 1..65535.
func CheckAddress(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("server %q: want host:port", addr)
	}
	if host == "" {
		return fmt.Errorf("server %q: empty host", addr)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("server %q: port must be between 1 and 65535", addr)
	}
	return nil
}
