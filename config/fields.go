package config

import (
	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/internal/configfile"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/sampler"
	"github.com/strata-cache/strata/tiers/embedded"
	"github.com/strata-cache/strata/tiers/hotkeys"
	"github.com/strata-cache/strata/tiers/layered"
	"github.com/strata-cache/strata/tiers/memcached"
	"github.com/strata-cache/strata/tiers/promote"
)

// Each package the file configures refuses a field with an error that
// names it, which configfile.Fields places on the field's key.
var (
	_ configfile.FieldError = (*proxy.FieldError)(nil)
	_ configfile.FieldError = (*memcached.FieldError)(nil)
	_ configfile.FieldError = (*embedded.FieldError)(nil)
	_ configfile.FieldError = (*layered.FieldError)(nil)
	_ configfile.FieldError = (*promote.FieldError)(nil)
	_ configfile.FieldError = (*hotkeys.FieldError)(nil)
	_ configfile.FieldError = (*sampler.FieldError)(nil)
	_ configfile.FieldError = (*admin.ConfigError)(nil)
)

// The key ↔ field maps of the packages the file configures. poolKeys (a
// tier's section) is in pool.go, proxyKeys in resolve.go.
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

		"NearBytes": "hotkeys.near_bytes", "Rules[].Reply": "hotkeys.rule[].reply",
		"Rules[].Staleness": "hotkeys.rule[].staleness", "Rules[].Near": "hotkeys.rule[].near",
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
		"TLS":          "admin.tls",
	}
)
