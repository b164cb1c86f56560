// Package hotmarks shares the hot-key tier's adaptive marks through the
// control store, so that every strata of a fleet splits the same keys: it
// is the fleet-wide hotkeys.MarkStore.
//
// Data flow: event loops call Publish with the marks their detector
// decided (about once a second each); Publish only merges them into a
// bounded buffer keyed by key (earliest Since, latest Seen), dropping and
// counting what does not fit. The package's one goroutine writes the
// buffered marks as rows RowPrefix+key, all with one lease granted for
// that write whose TTL is Config.Hold, at the first multiple of
// Config.Interval on the process's timer grid after a mark was buffered;
// while nothing is buffered it has no timer at all. The same
// goroutine watches RowPrefix and keeps a decoded copy of the rows; Marks
// returns that copy without I/O.
//
// Holding and expiry: a row lives Hold after the last write of it by any
// strata, because each write moves it to a fresh lease. A key that every
// strata stopped reporting therefore vanishes Hold after the last report,
// measured by the store's clock (etcd's leases), not by the stratas'
// clocks, which need not agree; the watch delivers the delete and the
// key is unsplit everywhere. A mark whose key is already in the copy keeps
// the copy's Since when it is earlier. Two stratas that first report a key
// at once may write different Since values; the last write wins. Stratas
// that share marks share their rules (see hotkeys): K travels with a mark
// for checking, the data path splits by its own rule.
//
// Failures: while the store cannot be reached, Marks keeps answering from
// the last copy (a split that outlives its hold costs fan-out, never a
// lost update: reads of split keys aggregate every part), and a failed
// write puts its marks back in the buffer, so publishing resumes when the
// store returns; a mark that waited longer than Hold since it was last
// seen is not written then (it cooled down meanwhile), judged by the time
// the tier last read the marks at. The watch resumes by itself
// (store.Watch) and converges the copy.
//
// Cost: one lease grant and one transaction per 128 marks (etcd's default
// limit of operations per transaction) per Interval per strata while it
// reports hot keys, nothing while it reports none; such a strata keeps
// about Hold/Interval leases alive, each ending Hold after its grant.
//
// Goroutines: Start starts the one goroutine; Close stops it, bounded by
// the store calls' contexts, then closes the store client if Open made the
// Shared, and is idempotent. Publish and Marks are safe
// from any goroutine and never block on the network.
package hotmarks
