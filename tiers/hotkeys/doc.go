// Package hotkeys splits keys that are written or read too often for one
// server: counters and lists over K sub-keys, hot reads over K copies in
// L1 (AutoShard's property sharding, applied to a cache).
//
// Data flow: the Tier sits in front of the L1/L2 layering. A request for a
// key under no rule passes straight through. A key under a rule (the
// longest matching prefix) is served by its rule's kind, through a fan
// (fan.go): each round issues the sub-operations together, so reading K+1
// keys costs one round trip, and the next step runs when the last answers.
//
// Semantics, per kind:
//
//   - counter: incr goes to one part (the next in the event loop's
//     rotation); the same round reads the other parts, and the reply is the
//     counter's total. A get sums the base key and every part. decr reads
//     every part, then takes the delta from the parts holding value, largest
//     first, each with memcached's own decr; so the total never goes below
//     0 and no increment is ever undone. Guarantee for concurrent decrs of
//     one counter: a decr may take less than asked when another took the
//     same value first (the total ends higher than some serial order would
//     give, never lower). No increment is lost to a concurrent incr or
//     decr, nor to a key being split or unsplit. A set or delete replaces
//     the counter whole: an incr racing with it counts as if it came
//     first, even when its reply already included the new base value.
//     set writes the base key and deletes every part in one round;
//     add/replace delete the parts once the base was stored; delete removes
//     all. incr of a counter with no part at all answers NOT_FOUND, as
//     memcached does. A split counter has no single CAS: gets (and mg
//     with c) answers the sum with FoldedCAS, a token no item carries; a
//     cas or compare-CAS carrying FoldedCAS answers EXISTS, any other
//     CLIENT_ERROR, as does ma with c.
//   - list: append/prepend go to one part (created with add, holding the
//     base key's TTL, when the list exists); a get returns the base value
//     then each part's, so items written through different parts are not
//     kept in write order. set and delete act on all parts; gets and cas
//     as for a counter (the concatenation with FoldedCAS; EXISTS or
//     CLIENT_ERROR).
//   - counter with Reply = ReplyBounded: incr answers from this strata's
//     view of the counter, one operation on the server (bounded.go has the
//     exact rules): the reply counts every increment acknowledged to any
//     client before a refresh at most Staleness old, plus every increment
//     issued through this strata since; replies never go down while only
//     increments happen; a decrease made elsewhere shows at the next
//     refresh, one made here (decr, set, delete) at once. decr and get
//     are as for exact replies; a get refreshes the view. The text incrs
//     (noreply ones too) of one counter that an event loop receives in one
//     round go to the servers as one incr of their summed delta once the
//     round's callbacks are done (combine.go): each is answered from the
//     view in issue order once that operation completed, and all share
//     its outcome, a failure included.
//   - read: the key is kept on K copies in L1; a connection reads its own
//     copy, which a miss fills from the tier of record with add (TTL at most
//     L1MaxTTL). Every write deletes all K copies before it is
//     acknowledged, split or not, and a guard keeps a fill that raced a
//     write from landing after the deletes: read-your-writes through one
//     strata holds. With Near, a key the detector finds hot is also kept
//     in this process (near.go) for at most Near: its gets cost no round
//     trip; a write through this strata drops it before it is answered; a
//     write through another strata shows after at most Near.
//
// Reads of counter and list keys always aggregate the base key and every
// part, whether the key is split now or not: stratas start and stop
// splitting without coordination, and an increment made while a key was
// split still counts after it is unsplit. Removing a rule or lowering its
// split makes the counts kept in dropped parts invisible; to stop
// splitting a prefix, make its rule adaptive (writes then go to the base
// key unless the key is hot) and remove it only after the parts expired.
//
// Parts are named key + 0x1f + "hk" + n: a text client cannot name them.
// With a memcached pool, n is chosen among candidates so that the parts
// spread over distinct servers (spread); every strata with the same
// server list picks the same names. Keys longer than 181 bytes are never
// split.
//
// Adaptive rules: each event loop feeds one access in Config.Sample to its
// own heavy-hitter detectors (heavy, one for reads, one for writes; no
// lock). Once a second a loop publishes its top keys and decides, from
// every loop's latest top keys, which keys of adaptive rules reach
// Config.Rate (decide, a pure function); it publishes them to the
// MarkStore, which shares marks across stratas, and refreshes the marks
// the data path reads. A mark not refreshed for Config.Hold expires and
// the key is unsplit. A mark carries its rule's K so that a fleet-wide
// store can check it, but the data path splits by the local rule: the
// stratas that share marks must share their rules and server lists, as
// they share everything else about the tiers.
//
// Goroutines: none. Sub-operations complete on the client operation's own
// event loop; a write delayed behind a copy fill resumes on its loop
// through the executor New takes (Deps.Loops, the proxy's loop handle),
// and a round's combined incrs leave through it once the round's
// callbacks are done (an executor that drops the function, as a stopped
// loop does, leaves those incrs unanswered).
package hotkeys
