// Command strata is the memcached-compatible tiered cache proxy: one binary
// whose subcommands serve, report, benchmark and control it.
//
//	strata serve [flags]          run the proxy (embedded L1/L2 unless configured)
//	strata config check FILE      validate a configuration file
//	strata config default         print the commented default configuration
//	strata ctl get|set ...        read and tune a running strata over its admin API
//	strata ctl top                the headline figures in a terminal, redrawn every second
//	strata report FILES...        per-family working sets, duplication and promotion model
//	strata bench run|compare|longtail|allocator
//	strata version
//
// Each verb lives in the file named after it and registers itself in an
// init function; the logic belongs to the packages, this command only maps
// flags and the TOML file onto their Configs.
package main
