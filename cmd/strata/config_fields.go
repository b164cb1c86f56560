package main

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/sampler"
	"github.com/strata-cache/strata/tiers/embedded"
	"github.com/strata-cache/strata/tiers/hotkeys"
	"github.com/strata-cache/strata/tiers/layered"
	"github.com/strata-cache/strata/tiers/memcached"
	"github.com/strata-cache/strata/tiers/promote"
)

// fieldError is how a package's Config.Validate refuses one field: the Go
// field's name ("MaxInflight", "Rules[2].Split") and why. The rules are
// the packages'; the file only knows where each field was written, so
// every refusal is placed on its key by the one function below.
type fieldError interface {
	error
	FieldName() string
	Unwrap() error
}

var (
	_ fieldError = (*proxy.FieldError)(nil)
	_ fieldError = (*memcached.FieldError)(nil)
	_ fieldError = (*embedded.FieldError)(nil)
	_ fieldError = (*layered.FieldError)(nil)
	_ fieldError = (*promote.FieldError)(nil)
	_ fieldError = (*hotkeys.FieldError)(nil)
	_ fieldError = (*sampler.FieldError)(nil)
	_ fieldError = (*admin.ConfigError)(nil)
)

// fieldKeys maps the fields of one package's Config onto the file's keys.
// A field mapped to "" is set from a key another package's Validate
// already judges by the same rule, and is not reported twice. An element of a list is written with empty brackets on both sides
// ("Rules[].Split" → "promotion.rule[].split"); the field's index goes
// into the key's brackets.
type fieldKeys map[string]string

var fieldIndexRE = regexp.MustCompile(`\[(\d+)\]`)

func (k fieldKeys) key(field string) (string, bool) {
	key, ok := k[fieldIndexRE.ReplaceAllString(field, "[]")]
	if m := fieldIndexRE.FindStringSubmatch(field); ok && m != nil {
		key = strings.Replace(key, "[]", "["+m[1]+"]", 1)
	}
	return key, ok
}

// fields reports err, what a package's Validate returned, one problem per
// refused field, each at its field's key. A field the file does not set
// (no key), or an error that names no field, is reported at section.
func (r *resolver) fields(err error, keys fieldKeys, section string) {
	if err == nil {
		return
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			r.fields(e, keys, section)
		}
		return
	}
	var fe fieldError
	if errors.As(err, &fe) {
		if key, ok := keys.key(fe.FieldName()); ok {
			if key != "" {
				r.bad(key, "%v", fe.Unwrap())
			}
			return
		}
	}
	r.bad(section, "%v", err)
}

// unsigned narrows a value of the file to an unsigned Config field. The
// range is the package's to check; this only refuses what the field's
// type cannot hold, which the package would never see.
func unsigned[T uint32 | uint64](v int64) (T, error) {
	if v < 0 {
		return 0, fmt.Errorf("%d is negative", v)
	}
	if uint64(v) > uint64(^T(0)) {
		return 0, fmt.Errorf("%d is too large", v)
	}
	return T(v), nil
}

// The key ↔ field maps of the packages the file configures. poolKeys (a
// tier's section) is in config_pool.go, proxyKeys in config_resolve.go.
var (
	layeredKeys = fieldKeys{
		"Threshold":         "promotion.threshold",
		"Rules[].Prefix":    "promotion.rule[].prefix",
		"Rules[].Threshold": "promotion.rule[].threshold",
		"L1MaxTTL":          "l1.max_ttl",
	}
	hotkeysKeys = fieldKeys{
		"Rate":           "hotkeys.rate",
		"Hold":           "hotkeys.hold",
		"HalfLife":       "hotkeys.half_life",
		"Counters":       "hotkeys.counters",
		"Sample":         "hotkeys.sample",
		"Rules[].Prefix": "hotkeys.rule[].prefix",
		"Rules[].Kind":   "hotkeys.rule[].kind",
		"Rules[].Split":  "hotkeys.rule[].split",
	}
	samplerKeys = fieldKeys{
		"MaxFileBytes": "sampler.rotate_size",
		"MaxFileAge":   "sampler.rotate_age",
		"Window":       "sampler.window",
		"Families[]":   "sampler.family[]",
	}
	adminKeys = fieldKeys{
		"Listen":       "admin.listen",
		"AllowedHosts": "admin.allowed_hosts",
	}
)
