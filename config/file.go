package config

import (
	"github.com/strata-cache/strata/internal/configfile"
	"github.com/strata-cache/strata/internal/tomlpos"
)

// The configuration file is read by internal/configfile; these are its
// types and rules under the names the schema's files use.
type (
	configError = configfile.Error
	byteSize    = configfile.Size
	duration    = configfile.Duration
	fieldKeys   = configfile.FieldKeys
	fieldError  = configfile.FieldError
)

// Errors is every problem found in one file (configfile.Errors);
// sorted puts them in line order.
type Errors []*configError

func (es Errors) Error() string  { return configfile.Errors(es).Error() }
func (es Errors) sorted() Errors { return Errors(configfile.Errors(es).Sorted()) }

func unsigned[T uint32 | uint64](v int64) (T, error) { return configfile.Unsigned[T](v) }

// fields reports err, what a package's Validate returned, one problem per
// refused field, each at its field's key (see configfile.Fields).
func (r *resolver) fields(err error, keys fieldKeys, section string) {
	configfile.Fields(err, keys, section, func(key string, e error) { r.bad(key, "%v", e) })
}

// MaxFileBytes bounds a configuration file. The default file is about
// 10 KB and a large fleet's a few tens: a file over 1 MiB is a mistake (a
// wrong path, a log, a generator run away), and refusing it before
// decoding keeps a SIGHUP from costing the running strata its memory.
const MaxFileBytes = 1 << 20

// configLimits are checked before the TOML decoder runs. No key of the
// schema has more than four parts or needs more than three levels of
// brackets.
var configLimits = configfile.Limits{
	Bytes:     MaxFileBytes,
	Bounds:    tomlpos.Limits{Depth: 32, KeyLen: 256, Parts: 16},
	EmptyHint: "run without --config for the defaults",
}
