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
// Moves: a move of epoch e+1 goes through three writes.
//
//  1. Migrate: the row becomes Prepare (Owner = the destination, Source =
//     the old owner, which still serves: Location.Serving), and a journal
//     entry for the move is written in the same transaction.
//  2. Promote, once every live strata applied the Prepare row: Migrating,
//     same epoch; the destination serves and fills from the source.
//  3. Settle, after the grace window: Stable, Source forgotten, and the
//     journal entry deleted in the same transaction.
//
// All three are fenced on the placement service's leadership and compare
// the row's revision and the epoch the caller decided on, so a move is
// decided once per epoch; Promote and Settle repeat harmlessly, for a
// successor that found the move in the journal (Journal) and rolls it
// forward. The journal thus names exactly the rows not Stable.
//
// Keys: rows are Prefix+"rows/"+name, journal entries
// Prefix+"journal/"+name, with name the μ-shard's name (keyrule's "prefix
// field" form). Row values are a compact binary encoding (Encode, Decode) because
// the table may hold millions of rows and etcd's size is bounded: a row
// with no history is about 10 bytes plus the owner's name, each history
// entry about 15 bytes plus the two region names, and History keeps the
// last MaxHistory moves.
//
// The package starts no goroutine; a Table is safe for concurrent use if
// its store client is.
package loctable
