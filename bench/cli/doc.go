// Package cli is `strata bench`: it turns the verb's flags into the Config
// of one experiment of the bench tree (driver, compare, longtail,
// allocator, locality), runs it and prints its report.
//
// The binary registers Run and owns only what is the binary's: the signal
// that cancels the context and the configuration file's size syntax,
// passed in as a SizeParser. Product packages never import the bench
// tree; the binary may.
package cli
