package memcached

import (
	"errors"
	"fmt"
	"strings"

	"github.com/strata-cache/strata/tiers/memcached/compat"
)

// A conversion between two compat layouts (Config.ConvertFrom): the pool
// is configured with the layout its keys are to be on (Compat and
// Servers) and the one they are on now, its prior layout. The control
// plane walks it exactly as a conversion to its own map (compat.go),
// shard by shard: a shard the map still lists on the layout is served,
// per key, by the prior layout's server; a converted shard by the new
// layout's server, per key, and never by the map's owner, which is then
// only a name the control plane keeps for the shard. A FromLayout move
// hands a key off from the prior layout's server to the new layout's
// (move.go), and a key both layouts put on one server takes no handoff
// (adding a server to a modula pool remaps nearly every key; to a ketama
// pool, few).
//
// The prior layout's servers need not be in Servers (a server the new
// layout drops keeps its connections, for the shards still on the prior
// layout and their handoffs). Every proxy of the tier must be configured
// alike. Once the map lists no shard on the layout, every key is on the
// new layout, and the pool can drop ConvertFrom and Managed: it then
// serves by the new layout alone, which is what the map made it do.

// PriorLayout is the compat layout a pool converts from: Config's fields
// of the same names, for the layout the keys are on now.
type PriorLayout struct {
	Compat       string
	Distribution string
	Hash         string
	HashTag      string
	CompatSeed   uint32
	// Servers, in the incumbent's order. Required.
	Servers []Server
}

// priorLayout builds the layout c converts from, or returns nil when c has
// none. Its error is a *FieldError naming the Config field at fault.
func (c *Config) priorLayout() (*compat.Layout, error) {
	pl := c.ConvertFrom
	if pl == nil {
		return nil, nil
	}
	if pl.Compat == "" {
		return nil, &FieldError{Field: "ConvertFrom.Compat", Err: errors.New("required: the scheme that places the keys now")}
	}
	list, err := checkServers(pl.Servers)
	if err != nil {
		return nil, &FieldError{Field: "ConvertFrom.Servers", Err: errors.New(strings.TrimPrefix(err.Error(), "memcached: "))}
	}
	return buildLayout(compat.Spec{Scheme: pl.Compat, Distribution: pl.Distribution, Hash: pl.Hash,
		HashTag: pl.HashTag, Seed: pl.CompatSeed}, list, "ConvertFrom.")
}

// priorErrors reports the ConvertFrom settings of a compat c that New
// would refuse.
func (c Config) priorErrors() []error {
	if c.ConvertFrom == nil {
		return nil
	}
	var errs []error
	if !c.Managed {
		errs = append(errs, &FieldError{Field: "ConvertFrom", Err: errors.New("a conversion is walked by the control plane: set managed")})
	}
	for _, s := range c.ConvertFrom.Servers {
		if s.Weight == 0 {
			errs = append(errs, &FieldError{Field: "ConvertFrom.Servers", Err: fmt.Errorf("server %s: weight 0 is out of range: 1 to %d", s.Addr, MaxWeight)})
			return errs
		}
	}
	if _, err := c.priorLayout(); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// priorServer is the server the prior layout names for key; rt has one.
func (rt *route) priorServer(key []byte) *server {
	return rt.priorOrder[rt.prior.Server(key)]
}

// sourceServer is the server a shard still on the layout places key on:
// the prior layout's in a conversion between layouts, else the layout's.
// rt has a layout.
func (rt *route) sourceServer(key []byte) *server {
	if rt.prior != nil {
		return rt.priorServer(key)
	}
	return rt.layoutServer(key)
}
