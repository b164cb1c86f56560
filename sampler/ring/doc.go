// Package ring is a bounded, lock-free queue for many producers and one
// consumer, built for handing sampled records from the event loops to the
// sampler's drainer without ever blocking an event loop.
//
// Every slot carries a sequence number. A producer claims the next position
// with one compare-and-swap on the tail, fills the slot in place and
// publishes it by storing the slot's sequence; the consumer reads slots in
// position order and hands each one back by advancing its sequence a lap.
// A producer that finds the ring full gives up at once and the ring counts
// the drop: losing a sample is acceptable, stalling a request is not.
//
// Usage contract:
//
//  1. A producer calls Reserve. On false the value is dropped (and counted).
//  2. On true it writes the slot's Val (the slot's previous contents are
//     stale: overwrite every field it uses) and calls Commit exactly once,
//     promptly: the consumer cannot pass an uncommitted slot.
//  3. Only one goroutine at a time calls Drain. The pointer handed to its
//     callback is valid only during the call; copy what must outlive it.
//
// Slots are allocated once in New; nothing is allocated afterwards. Values
// are copied in place, so a value type with a fixed-size array (a key
// buffer) moves through the ring without touching the heap.
package ring
