// Package auth decides who may use a strata endpoint when it is set to
// require authentication, as memcached does with -Y (ASCII auth) and -S
// (SASL over the binary protocol).
//
// # Data path
//
// Users holds the accounts of a users file in memcached's -Y format (one
// "user:password" a line). The protocol parser asks Check when a text
// client sends its credentials as the value of a set, or a binary client
// sends SASL PLAIN; until one succeeds the connection is refused every
// other command. Reload re-reads the file (SIGHUP); a file that no longer
// parses leaves the accounts in force.
//
// # Concurrency
//
// Users is safe for concurrent use: the event loops call Check while a
// signal handler calls Reload. The account set is swapped whole through an
// atomic pointer, so Check takes no lock. No goroutine is started.
//
// # Slowing a failing client
//
// Delay is a pure function of a connection's failures and the Config: the
// proxy holds the reply of each failed attempt past SlowAfter failures for
// that long, so a client guessing passwords is slowed, not served.
// Passwords never reach a log or an error: errors name the file and line.
package auth
