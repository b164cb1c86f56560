// Package driver is strata's load generator: it turns a workload into
// memcached text-protocol traffic over TCP and measures what comes back.
//
// Data path: Run dials Conns connections; each is driven by one worker that
// draws requests from its own workload.Generator, encodes them into one
// write buffer and parses the replies in order from a buffered reader
// (values are skipped, never copied). Closed loop writes Pipeline requests,
// then reads Pipeline replies, and charges each its time from the write to
// its reply. Open loop sends on a fixed timetable of Rate requests per second
// over all connections and charges each request from its scheduled time, so
// a server that stalls is billed for every request it held back; the
// sender sleeps the last stretch before a due time on a kernel timer
// (pace.go), and reports how late it sent (SendLag), the generator's own
// share of every latency.
//
// Goroutines: Run owns them all — one per connection (two in open loop:
// sender and receiver) and one for the progress line — and every one has
// ended when Run returns. A worker's counters and histogram belong to the
// goroutine that parses replies; Run merges them after the loops end.
//
// Accounting: a request is counted when its reply is parsed; a request
// written on a connection that then fails is counted lost. With Requests set,
// exactly that many requests are written (fewer only if the duration or ctx
// ends the run first). A read miss, when the profile asks for read-through,
// queues a set of the same key that is sent before the next fresh request and
// counts as one of the requests.
package driver
