package config

import _ "embed"

// DefaultFile is what `strata config default` prints: every key with
// its default value, and the alternatives commented out. Loading it gives
// exactly the configuration of `strata serve` without a file (a test holds
// it to that).
//
//go:embed default.toml
var DefaultFile string
