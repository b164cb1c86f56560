// Package poll is the one way tests wait for an effect another goroutine or
// process produces: check a condition every few milliseconds until it holds,
// and fail the test, naming what was awaited, once a deadline passes.
//
// Tests never sleep for a fixed time; they poll with a deadline (house rule).
// Each caller keeps its own deadline, generous because the machine running
// the tests is shared. Until runs on the test's goroutine, starts none, and
// calls cond from that goroutine only.
package poll
