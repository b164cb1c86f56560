// Package loctable is the location table of locality routing in the
// control store: one row per μ-shard, holding its owner region, the epoch
// of that ownership, its migration state, the previous owner while a move
// is in its grace window, and a short history of moves.
//
// Data flow: the placement service writes rows (Create for a μ-shard seen
// for the first time, later its migrations); every strata reads them into
// its per-loop location caches (loccache) through the location service.
// The request path never reads the table.
//
// Create-once: a μ-shard seen for the first time may be reported by many
// proxies at once. Create writes its row only if the key is absent, in one
// transaction, and otherwise returns the row that is there: exactly one
// caller creates it, and every caller learns the same owner. Given a
// Leadership, the write is also fenced on it, so a deposed placement
// service cannot create rows either.
//
// Moves: Migrate starts one (epoch+1, Migrating, the old owner kept as
// Source) and Settle ends its grace window (Stable). Both are fenced on
// the placement service's leadership and compare the row's revision and
// the epoch the caller decided on, so a move is decided once per epoch;
// Settle repeats harmlessly, for a successor finishing a move. The
// journal that lets that successor find unfinished moves is not here yet.
//
// Row keys are Prefix + the μ-shard's name (keyrule's "prefix field"
// form); values are a compact binary encoding (Encode, Decode) because
// the table may hold millions of rows and etcd's size is bounded: a row
// with no history is about 10 bytes plus the owner's name, each history
// entry about 15 bytes plus the two region names, and History keeps the
// last MaxHistory moves.
//
// The package starts no goroutine; a Table is safe for concurrent use if
// its store client is.
package loctable
