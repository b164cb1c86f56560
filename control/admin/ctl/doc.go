// Package ctl is `strata ctl`, the command-line client of the admin API:
// it maps its arguments onto one call of admin.Client (or, for top, onto
// package top's loop) and prints the reply as indented JSON.
//
// It keeps no state and starts no goroutine beyond top's, which stops on
// SIGINT or SIGTERM or after --count frames. The binary registers Run.
package ctl
