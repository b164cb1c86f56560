package main

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

// configErrors is every problem found in one file (configfile.Errors);
// sorted puts them in line order.
type configErrors []*configError

func (es configErrors) Error() string        { return configfile.Errors(es).Error() }
func (es configErrors) sorted() configErrors { return configErrors(configfile.Errors(es).Sorted()) }

func parseSize(s string) (byteSize, error) { return configfile.ParseSize(s) }
func clipKey(s string) string              { return configfile.Clip(s) }
func clipMsg(s string) string              { return configfile.ClipWords(s) }

func unsigned[T uint32 | uint64](v int64) (T, error) { return configfile.Unsigned[T](v) }

// fields reports err, what a package's Validate returned, one problem per
// refused field, each at its field's key (see configfile.Fields).
func (r *resolver) fields(err error, keys fieldKeys, section string) {
	configfile.Fields(err, keys, section, func(key string, e error) { r.bad(key, "%v", e) })
}

// maxConfigBytes bounds a configuration file. The default file is about
// 10 KB and a large fleet's a few tens: a file over 1 MiB is a mistake (a
// wrong path, a log, a generator run away), and refusing it before
// decoding keeps a SIGHUP from costing the running strata its memory.
const maxConfigBytes = 1 << 20

// configLimits are checked before the TOML decoder runs. No key of the
// schema has more than four parts or needs more than three levels of
// brackets.
var configLimits = configfile.Limits{
	Bytes:     maxConfigBytes,
	Bounds:    tomlpos.Limits{Depth: 32, KeyLen: 256, Parts: 16},
	EmptyHint: "run without --config for the defaults",
}
