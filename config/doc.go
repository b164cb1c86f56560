// Package config is strata's configuration file: its schema (the TOML
// keys of `strata config default`), the serve flags that override keys,
// and the resolution of a file onto each package's own Config.
//
// The rules stay with the packages. Each package's Config has its
// defaults (DefaultConfig) and judges its values (Validate, refusing with
// an error that names the field); this package fills a package's Config
// from the keys the file gives, hands it to Validate, and places every
// refusal on its key as FILE:LINE: key: message. What is the file's own is
// here: which keys go together (servers make a memcached pool), the
// names that no one package owns ([server] cluster and region), the
// defaults the file picks for the composition (the L2's memory), and one
// [locality] section feeding the router, the placement service and the
// location service.
//
// Load reads a file with the same rules at start, in `config check` and
// on SIGHUP (internal/configfile bounds its size and nesting before the
// TOML decoder runs). Settings.Effective is the file as in force, every
// key filled, which /admin/v1/config shows.
package config
