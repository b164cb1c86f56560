// Package mctext is the memcached text-protocol client of the tests: one
// connection, one request at a time, each reply read line by line.
//
// It serves tests that talk to strata or to a memcached directly and want
// the reply as the wire spells it (an error line is a result, not an
// error), which a full client library hides. Every failure of the
// connection itself (dial, write, read, deadline) fails the test with
// t.Fatalf. A Conn serves one goroutine at a time; code that must go on
// after a connection error needs its own error-returning client.
//
// Tests that do something special with the wire (partial writes, byte-level
// fuzzing, pipelining thousands of requests) keep their own code.
package mctext
