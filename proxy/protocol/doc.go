// Package protocol is the client side of strata's memcached codec: it
// parses the text, meta and binary protocols of memcached 1.6.18 into
// tiers.Requests, and spells tiers.Results back in exactly the bytes
// memcached would send. A connection whose first byte is 0x80 speaks the
// binary protocol for its life (binary.go); its requests become the
// Requests of their text twins, and only the reply remembers the format.
//
// # Data path
//
// A connection's unread bytes go to Parser.Parse, which fills a Command
// from the first complete request and says how many bytes it used. The
// proxy hands Command.Reqs to the tiers, and once every Result is in,
// Command.AppendReply writes the answer. Requests the parser can answer
// alone (errors, me, mn) carry their reply in the Command.
//
// # Usage contract
//
//  1. One Parser per connection (NewParser, or Parser.Reset on reuse). It
//     holds connection state: whether the first byte was seen, and how much
//     of a refused data block is still to be swallowed. Its working memory
//     within a call (a Scratch) holds nothing between calls: parsers that
//     run on one goroutine share one with NewParserShared. Between
//     requests its state is a Mode: once every Command it filled was
//     answered, Park gives the Mode of a Parser at rest, and Resume lets
//     any Parser go on for the connection, so a quiet connection need not
//     keep one.
//  2. Call Parse with all unread bytes. n == 0 and no error: wait for more
//     bytes and call again with the longer buffer; nothing was consumed.
//     n > 0: discard n bytes. Op == OpNone: nothing to answer. A
//     get-family line comes out as several Commands (pieces of at most
//     PieceKeys keys); Command.More reports that more of the line follows.
//  3. errors.Is(err, ErrClose): stop reading and close. For quit
//     (Op == OpQuit) memcached first writes every pending reply. For the
//     other reasons (HTTP request, over-long line, a bad binary magic) it
//     closes at once and drops the replies it has not written yet: those
//     after the last get-family command or mn of the bytes it read in one
//     go, since only those commands make it write out its pending
//     replies. Command.Reply, when set, is the last thing to write.
//  4. Replies leave in request order. Several Commands may be in flight;
//     each owns its Reqs, keys, values and Args until it is passed to Parse
//     again or Reset, so keep one Command per in-flight request.
//  5. AppendReply(dst, res) with res[i] the Result of Reqs[i]. It writes
//     nothing where memcached writes nothing (noreply, meta quiet mode).
//     The pieces of a line must be answered in order, as the reply queue
//     does: a piece's reply depends on whether an earlier one failed.
//
// # Buffer ownership
//
// Parse borrows buf for the duration of the call only: everything a
// Command keeps (keys, values, opaque tokens, Args) is copied into memory
// the Command owns and reuses, so a warm Parser and Command allocate
// nothing per request. Command.Reply may point at shared read-only
// constants. AppendReply only appends to dst.
//
// # Goroutines
//
// None. Parser and Command belong to the goroutine of their connection's
// event loop and are not safe for concurrent use.
//
// # Fidelity
//
// The parser reproduces memcached's lexing and its order of checks, since
// the first failing check picks the error text: lines split on spaces only,
// a NUL ends a line, at most 23 tokens are split, numbers parse like C's
// strtol/strtoul with memcached's 32-bit truncation, noreply is honoured
// only as the last token and silences the errors found after memcached
// notices it, a refused data block is swallowed while a malformed line is
// not (its data is then read as commands), a data block not ending in
// \r\n is consumed and answered "CLIENT_ERROR bad data chunk", base64 keys
// decode with memcached's lenient decoder. Where the proxy cannot or
// should not act as memcached does, the deviation is listed here:
//
//   - Binary: a get returns the CAS, so it is read like gets (WantCAS: the
//     tier of record, never an L1 copy). A tier failure answers status
//     0x84 with the reason as body; memcached has no such failure. Stat
//     values are strata's (see stats); a stat group is matched whole,
//     memcached matches its prefix. After a bad magic byte the proxy
//     still writes the replies before it; memcached drops those it had
//     not yet written. SASL opcodes answer as a memcached without -S.
//   - Authentication (Limits.Auth, auth.go): while a text connection is
//     not authenticated memcached keeps only the last of the replies to
//     what it read at once; the proxy answers every request. An
//     authentication value over 4 KiB is refused and swallowed rather than
//     buffered. Binary SASL offers PLAIN only, checked against the users
//     file; memcached lists and checks what its SASL library holds.
//   - A get/gets line longer than Limits.MaxLineLen (1 MiB) is served in
//     pieces as it arrives (parse_get.go) rather than buffered whole as
//     memcached does. An over-long key in it after the first MaxLineLen
//     bytes then answers "CLIENT_ERROR bad command line format" after the
//     values already answered; memcached answers the error alone. Within
//     MaxLineLen the error is alone, as in memcached.
//   - A get-family line whose keys span several pieces and meet a tier
//     failure answers the values of the pieces before it, then one
//     SERVER_ERROR line that ends the reply (no END); a one-piece line
//     answers the SERVER_ERROR alone.
//   - memcached answers a key repeated more than 60,000 times in one line
//     as a miss after that (its item reference count limit); the proxy
//     answers every repeat.
//   - cache_memlimit, slabs (automove, reassign) and lru_crawler get
//     memcached's argument checks and error texts here; a well-formed one
//     becomes an OpAdmin that the proxy answers (see proxy's inspect.go:
//     memcached's answer, or a documented SERVER_ERROR where strata has
//     nothing to act on). The other administration commands (lru, watch,
//     extstore) answer ERROR; shutdown answers as a memcached without -A
//     does. refresh_certs becomes an OpAdmin too: only the proxy knows
//     whether it serves TLS.
//   - me carries memcached's reply for an absent item (EN) in Reply and
//     its key in Args; the proxy answers from a tier that can show the
//     item, and sends EN otherwise.
//   - An oversized O token of ma is refused before the operation; memcached
//     applies the operation, then refuses.
//   - mg/ms k prints the key base64 encoded when the request used b;
//     memcached decides from how the item was stored.
//   - ma in quiet mode hides the HD/VA of an item it created (N flag);
//     memcached shows it.
//   - A get with a too-long key answers only the error; memcached also
//     drops replies of earlier pipelined requests it had not yet sent.
package protocol
