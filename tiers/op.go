package tiers

// Kind is the family of a cache operation. Every text and meta command that
// touches data is expressed as one of the four meta operations, because the
// meta protocol is a superset of the text one: get/gets/gat/gats/touch are
// metaget, set/add/replace/append/prepend/cas are metaset, delete is
// metadelete and incr/decr are metaarithmetic.
type Kind uint8

const (
	KindGet    Kind = iota // mg
	KindSet                // ms
	KindDelete             // md
	KindArith              // ma
	KindFlush              // flush_all: Req.TTL holds the delay in seconds
)

// Mode selects the behaviour of a set (M flag of ms) or an arithmetic
// operation (M flag of ma).
type Mode uint8

const (
	ModeSet     Mode = iota // ms default
	ModeAdd                 // ms ME: store only if absent
	ModeReplace             // ms MR: store only if present
	ModeAppend              // ms MA
	ModePrepend             // ms MP
	ModeIncr                // ma default
	ModeDecr                // ma MD
)

// Request is one operation on one key, in meta-protocol terms. The proxy
// fills it from a parsed command; tiers read it and never keep references to
// Key or Value past the completion of the Op that carries it.
type Request struct {
	Kind Kind
	Mode Mode

	// Key is the decoded key (base64 already undone for meta b keys).
	Key []byte
	// Value is the data block of a set, without the trailing \r\n.
	Value []byte
	// ClientFlags is the opaque 32-bit flags word stored with a value.
	ClientFlags uint32

	// TTL is the expiry as the client wrote it, in memcached's convention:
	// 0 never expires, negative is already expired, up to 30 days is
	// relative seconds, above that an absolute Unix time. For a set it is
	// the item's exptime; for get/delete/arith it is applied only when
	// HasTTL is set (T flag, gat, touch).
	TTL    int64
	HasTTL bool

	// CompareCAS is the C flag of ms/md/ma and the unique of the text cas
	// command: the operation only applies if the item's CAS equals it.
	CompareCAS    uint64
	HasCompareCAS bool

	// Delta and Initial are the D and J flags of ma (defaults 1 and 0).
	Delta   uint64
	Initial uint64

	// Vivify is the N flag: on a miss, create the item (empty for mg and
	// append, Initial for ma) with VivifyTTL and, for mg, hand this client
	// the win token.
	Vivify    bool
	VivifyTTL int64

	// Recache is the R flag of mg: if the item's remaining TTL is below
	// RecacheTTL, this client wins the right to recache it.
	Recache    bool
	RecacheTTL int64

	// Invalidate is the I flag: for ms, a CAS older than the item's marks the
	// stored value stale instead of failing; for md, mark stale instead of
	// removing.
	Invalidate bool

	// NoBump is the u flag of mg: do not refresh the item's LRU position.
	NoBump bool

	// KeyBinary is the b flag of a meta command: Key was sent base64
	// encoded. An item created by such a request remembers it, and mg k
	// echoes its key the way it was created.
	KeyBinary bool

	// Text marks a request that came from a text-protocol command (get,
	// gets, gat, gats, touch, set, add, replace, append, prepend, cas, incr,
	// decr, delete) rather than a meta one. memcached treats the two alike
	// except in details a tier must reproduce: a text get of a stale item
	// hands out no win token (an mg does, and later mg's then see Z), and a
	// storage command that fails for size drops the existing item for text
	// set only, for ms in every mode. The zero value means meta.
	Text bool

	// NoReply: the client will not read this request's nominal reply (text
	// noreply, meta q). A tier may skip work that only shapes that reply
	// (a split counter's incr then skips reading the other parts); errors
	// are still reported.
	NoReply bool

	// Link marks a request that arrived on a region link (another region's
	// strata forwarded it): the locality tier serves it from the local
	// tiers or refuses it, and never forwards it again. LinkEpoch is the
	// location epoch the sender routed it with (0: none given);
	// LinkSource marks a read or delete of a migration's other side, which
	// is served locally without asking who owns the key. The proxy sets
	// them from the connection and the meta opaque token (see
	// tiers/locality/linkproto); other tiers ignore them.
	Link       bool
	LinkSource bool
	LinkEpoch  uint64
	// LinkDeadline, on a link write, is the Unix millisecond past which
	// the receiver must refuse it: its sender has answered it as failed
	// (linkproto's deadline). 0: none given.
	LinkDeadline int64

	// Want* say which optional facts the reply needs, so a backend tier can
	// ask for exactly those and an embedded tier can skip work.
	WantValue      bool // v (or any text get)
	WantCAS        bool // c (or gets/gats)
	WantFlags      bool // f (or any text get)
	WantTTL        bool // t
	WantLastAccess bool // l
	WantHit        bool // h
	WantSize       bool // s
}

// Status is the outcome of an operation, before it is spelt in the text or
// meta protocol.
type Status uint8

const (
	// StatusHit: mg found the item (VA/HD; VALUE/TOUCHED in text).
	StatusHit Status = iota
	// StatusMiss: mg found nothing (EN), or the key of md/ma/touch was absent
	// (NF; NOT_FOUND in text).
	StatusMiss
	// StatusStored: ms stored (HD; STORED), md deleted (HD; DELETED), ma
	// applied (HD/VA; the number in text).
	StatusStored
	// StatusNotStored: ms add/replace/append/prepend condition failed (NS;
	// NOT_STORED).
	StatusNotStored
	// StatusExists: the compare CAS did not match (EX; EXISTS).
	StatusExists
	// StatusNotFound: a CAS operation on a missing key (NF; NOT_FOUND).
	StatusNotFound
	// StatusNonNumeric: ma on a value that is not a decimal number.
	StatusNonNumeric
	// StatusTooLarge: the item does not fit the tier's item size limit.
	StatusTooLarge
	// StatusNoMemory: the tier could not make room for the item.
	StatusNoMemory
	// StatusError: the tier failed (backend down, timeout, bad reply). Err
	// says why; the proxy replies SERVER_ERROR.
	StatusError
)

var statusNames = [...]string{"hit", "miss", "stored", "not_stored", "exists", "not_found", "non_numeric", "too_large", "no_memory", "error"}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "unknown"
}

// Result is what a tier found. Value is owned by the Result (tiers append
// into it, reusing its capacity) so a hit costs no allocation once warm.
type Result struct {
	Status Status
	// Value is the item's data (mg v), or the new number in decimal for ma.
	Value       []byte
	ClientFlags uint32
	CAS         uint64
	// TTL is the remaining time to live in seconds after the operation,
	// -1 when the item never expires.
	TTL int64
	// LastAccess is seconds since the item was last accessed (mg l).
	LastAccess int64
	// Size is the length of the item's value (mg s), also set when the
	// value itself was not asked for.
	Size int
	// Fetched: the item had been fetched before this request (mg h).
	Fetched bool
	// Win, Stale and AlreadyWon are the W, X and Z return flags of mg.
	Win, Stale, AlreadyWon bool
	// KeyBinary: the item was created with a base64 (b) key.
	KeyBinary bool
	// Created: ma created the item (N flag on a miss); memcached then
	// answers even in quiet mode.
	Created bool
	// Level is the tier that answered a get: 1 for L1, 2 for L2, 0 for a
	// miss or a non-get. The layered tier sets it; the sampler records it.
	Level uint8
	// Promoted: this L2 hit was chosen for promotion into L1.
	Promoted bool
	// Err explains StatusError.
	Err error
}

// Reset clears r for reuse, keeping the capacity of Value.
func (r *Result) Reset() {
	v := r.Value[:0]
	*r = Result{Value: v}
}

// Op carries one Request through a tier and back. The issuer owns the Op
// until Done is called; the tier owns it in between and must not touch it
// after calling Done.
type Op struct {
	Req Request
	Res Result

	// Loop is the index of the event loop the Op was issued on. Done runs on
	// that loop. Backend tiers keep connections per loop so an Op never
	// leaves its loop's goroutine.
	Loop int

	// Done is called exactly once when Res is final. Synchronous tiers call
	// it before Do returns. Issuers set it once per reusable Op (a method
	// value bound at construction), so issuing costs no allocation.
	Done func(*Op)

	// Conn identifies the client connection the Op serves, for tiers that
	// pick among equivalent copies per connection (hot read keys); 0 when
	// unknown. The proxy numbers connections 1, 2, 3, ... in the order it
	// accepts them, so consecutive connections spread evenly over copies.
	Conn uint64

	// Ctx and Tag are free for the issuer (for example the proxy's reply
	// slot, and the key bucket it orders the operation by).
	Ctx any
	Tag uint32

	// Stall stamps an Op that serves a client request with the stall
	// generation (internal/stall) the request was read under, plus one
	// (ReadUnder); 0 marks a tier's own work (a promotion, an
	// invalidation completing a write already made), which no stall
	// holds. The proxy stamps what it parses; a tier that issues sub-Ops
	// for a client's request copies the stamp into them. Where a request
	// leaves the process (a memcached pool's or the link client's queue),
	// or a locality task hands it to the local tiers, a write stamped
	// before the generation now is failed with stall.ErrHeld rather than
	// sent (HeldThrough): it waited inside a tier across a stall, and its
	// client may have given up on it.
	Stall uint64
}

// ReadUnder stamps op as serving a client request read under stall
// generation gen.
func (op *Op) ReadUnder(gen uint64) { op.Stall = gen + 1 }

// HeldThrough reports whether op serves a client request read before
// stall generation gen began: a stall has ended since it was read. An
// unstamped Op is never held. gen may lag the process's generation (a
// loop's view): a request stamped under a newer one is not held.
func (op *Op) HeldThrough(gen uint64) bool { return op.Stall != 0 && op.Stall <= gen }

// Tier is one cache layer: the embedded store, a memcached pool, or the
// L1/L2 layering of two of them. It is the whole contract between the proxy
// and what it serves from: the proxy finds no other ability by type
// assertion, so a tier that wraps another (locality routing, hot-key
// splitting) and forgets a method does not compile, rather than losing
// requests at run time. The other seam is the event loops, which every
// tier that needs them takes in its constructor (see the package doc).
type Tier interface {
	// Do starts op. Done is called when it completes, possibly before Do
	// returns.
	Do(op *Op)
	// Phase is the ordering phase of r within one client connection: of two
	// requests for one key, the later waits while the earlier one of the
	// other phase is in flight; requests of one phase, or for other keys,
	// go out together (PhaseExclusive: with nothing of its key), except
	// two plain reads (IsRead) of one key, the later of which waits. 0
	// means no constraint. A tier that answers in one hop keeps
	// per-connection order by itself and returns 0 (NoPhase); a tier that
	// wraps others returns what its own path needs. The proxy asks only
	// when some tier can answer after Do returns (it owns a pool):
	// otherwise nothing is ever in flight to be overtaken.
	Phase(r *Request) uint8
}

// PhaseExclusive is a Phase for a request that must not be in flight
// together with any other request for its key on its connection, of any
// phase, itself included: it waits for them, and later ones wait for it.
// Phases 1 and 2 are the usual pair; a tier whose requests for one key can
// take different paths, neither of which keeps order (a forward to
// another region and the local tiers), makes its writes exclusive.
const PhaseExclusive uint8 = 3

// NoPhase is embedded by tiers that need no ordering between requests of
// one connection: its Phase is always 0.
type NoPhase struct{}

// Phase returns 0.
func (NoPhase) Phase(*Request) uint8 { return 0 }

// The classification below is the one every tier routes by; a tier whose
// rule differs keeps its own and says why beside it.

// IsWrite reports whether r changes an item's value or existence: a set
// (any mode, CAS included), a delete or an arithmetic operation. During a
// move such a request goes to the owner and then deletes the key at the
// other side. A touch or gat (a get with HasTTL) changes only a TTL and is
// not a write here; a flush is neither.
func (r *Request) IsWrite() bool {
	return r.Kind == KindSet || r.Kind == KindDelete || r.Kind == KindArith
}

// IsRead reports whether r is a plain read: a get that changes nothing
// stored (no TTL: not a touch or gat) and asks for none of memcached's
// lease machinery (no N, no R). Only such a request may be answered by a
// miss when its data cannot be reached, or be answered from a copy fetched
// elsewhere (a move's fill from the source): nothing in its reply depends
// on state only the owner holds.
func (r *Request) IsRead() bool {
	return r.Kind == KindGet && !r.HasTTL && !r.Vivify && !r.Recache
}

// Cacheable reports whether r is a plain read (IsRead) that asks for
// nothing a cached copy could get wrong: no CAS, remaining TTL, last
// access or fetched flag, all of which belong to the tier of record. Such
// a read may be served from an L1 or a hot key's copy.
func (r *Request) Cacheable() bool {
	return r.IsRead() && !r.WantCAS && !r.WantTTL && !r.WantLastAccess && !r.WantHit
}
