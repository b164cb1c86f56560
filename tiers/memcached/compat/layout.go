package compat

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Scheme names, as a pool's compat setting spells them.
const (
	Twemproxy          = "twemproxy"
	LibmemcachedKetama = "libmemcached-ketama"
	Pymemcache         = "pymemcache"
	PythonMemcached    = "python-memcached"
	Gomemcache         = "gomemcache"
	McrouterCh3        = "mcrouter-ch3"
	McrouterCRC32      = "mcrouter-crc32"
)

// Schemes lists the scheme names.
var Schemes = []string{Twemproxy, LibmemcachedKetama, Pymemcache, PythonMemcached,
	Gomemcache, McrouterCh3, McrouterCRC32}

// Distributions.
const (
	Ketama         = "ketama"
	KetamaWeighted = "ketama_weighted" // libmemcached-ketama only
	Modula         = "modula"
	Random         = "random" // twemproxy's; refused
)

// Server is one server of the incumbent's list, in the incumbent's order
// (modula schemes index it; ketama hashes names, so order only breaks ties).
type Server struct {
	Host string // host name or address, as the incumbent was given it
	Port int
	// Weight is the relative share, 1 or more; zero reads as 1.
	Weight int
	// Name replaces "host:port" in twemproxy's ketama hash when set.
	Name string
}

// Spec selects a scheme and its settings. Empty strings mean the
// incumbent's default.
type Spec struct {
	Scheme string
	// Distribution: twemproxy ketama (default) or modula;
	// libmemcached-ketama ketama (default) or ketama_weighted.
	Distribution string
	// Hash: twemproxy's hash (default fnv1a_64); libmemcached-ketama's key
	// hash (default one_at_a_time, libmemcached's own default; md5 under
	// ketama_weighted, which sets it).
	Hash string
	// HashTag: twemproxy's two-character hash tag, e.g. "{}".
	HashTag string
	// Seed: pymemcache RendezvousHash's seed (default 0).
	Seed uint32
}

// SpecError is a refused setting: Field is the Spec field ("Scheme",
// "Distribution", "Hash", "HashTag", "Seed") or "Servers".
type SpecError struct {
	Field string
	Err   error
}

func (e *SpecError) Error() string { return "compat: " + e.Field + ": " + e.Err.Error() }
func (e *SpecError) Unwrap() error { return e.Err }

func specErr(field, format string, a ...any) error {
	return &SpecError{Field: field, Err: fmt.Errorf(format, a...)}
}

// ErrNotReproducible is the cause of refusing a distribution that picks
// servers at random.
var ErrNotReproducible = errors.New("random distribution cannot be reproduced: the incumbent's placement is not a function of the key")

type kind uint8

const (
	kindContinuum  kind = iota // ketama ring: binary search on points
	kindBuckets                // hash modulo a bucket list
	kindRendezvous             // pymemcache: highest murmur3("node-key")
	kindFurc                   // mcrouter ch3
)

// point is one spot on a ketama continuum.
type point struct {
	value  uint32
	server int32
}

// Layout places keys exactly as one incumbent does. It is immutable and safe
// for concurrent use; Server allocates nothing.
type Layout struct {
	kind    kind
	n       int
	hash    HashFunc
	points  []point  // kindContinuum, sorted by value
	start   []uint32 // kindContinuum: the index on points (continuum.go)
	near    []uint64 // kindContinuum: each bucket's servers, when it needs no search (continuum.go)
	shift   uint     // kindContinuum: a hash's bucket is hash >> shift
	buckets []int32  // kindBuckets: server index per bucket
	names   [][]byte // kindRendezvous: "host:port-" per server
	nameStr []string // kindRendezvous: "host:port" for ties
	seed    uint32   // kindRendezvous
	tag     [2]byte  // twemproxy hash_tag
	hasTag  bool
	oneZero bool // python-memcached: a hash of 0 counts as 1
	// emptyZero: twemproxy hashes an empty key (or an empty tag) to 0.
	emptyZero bool
	// md5: a continuum whose key hash is MD5's first word (MD5Block).
	md5 bool
}

// Servers returns the number of servers.
func (l *Layout) Servers() int { return l.n }

// Server returns the index in the server list of the server that holds key.
func (l *Layout) Server(key []byte) int {
	if l.n == 1 {
		return 0
	}
	switch l.kind {
	case kindContinuum:
		return l.serverAt(l.keyHash(key))
	case kindBuckets:
		h := l.keyHash(key)
		if l.oneZero && h == 0 {
			h = 1
		}
		return int(l.buckets[h%uint32(len(l.buckets))])
	case kindRendezvous:
		best, bestScore := -1, int64(-1)
		for i, name := range l.names {
			s := int64(murmur3x86_32(l.seed, name, key))
			if s > bestScore || (s == bestScore && l.nameStr[i] > l.nameStr[best]) {
				best, bestScore = i, s
			}
		}
		return best
	default:
		return int(furcHash(key, uint32(l.n)))
	}
}

// keyHash applies twemproxy's hash tag and empty-key rule, then the hash.
func (l *Layout) keyHash(key []byte) uint32 {
	key = l.hashedPart(key)
	if l.emptyZero && len(key) == 0 {
		return 0
	}
	return l.hash(key)
}

// hashedPart is the part of key the hash reads: what twemproxy's hash tag
// encloses, when the key has a non-empty one, else all of it.
func (l *Layout) hashedPart(key []byte) []byte {
	if l.hasTag {
		if i := indexByte(key, l.tag[0]); i >= 0 {
			if j := indexByte(key[i+1:], l.tag[1]); j > 0 {
				return key[i+1 : i+1+j]
			}
		}
	}
	return key
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// New builds the layout of spec over servers, or returns a *SpecError
// naming the setting it refuses.
func New(spec Spec, servers []Server) (*Layout, error) {
	if len(servers) == 0 {
		return nil, specErr("Servers", "a compat layout needs at least one server")
	}
	ws := make([]int, len(servers))
	weighted := false
	for i, s := range servers {
		ws[i] = s.Weight
		if ws[i] == 0 {
			ws[i] = 1
		}
		if ws[i] < 0 {
			return nil, specErr("Servers", "server %d: weight %d is negative", i, s.Weight)
		}
		if ws[i] != 1 {
			weighted = true
		}
	}
	named := slices.ContainsFunc(servers, func(s Server) bool { return s.Name != "" })
	refuse := func(field, value string) error {
		return specErr(field, "%s has no %s setting (got %q)", spec.Scheme, strings.ToLower(field), value)
	}
	// Settings each scheme lacks.
	has := map[string][]string{
		Twemproxy:          {"Distribution", "Hash", "HashTag", "weights", "names"},
		LibmemcachedKetama: {"Distribution", "Hash", "weights"},
		Pymemcache:         {"Seed"},
		PythonMemcached:    {"weights"},
		Gomemcache:         {},
		McrouterCh3:        {},
		McrouterCRC32:      {},
	}
	allowed, ok := has[spec.Scheme]
	if !ok {
		return nil, specErr("Scheme", "unknown scheme %q (one of %s)", spec.Scheme, strings.Join(Schemes, ", "))
	}
	for _, c := range []struct{ field, value string }{
		{"Distribution", spec.Distribution}, {"Hash", spec.Hash}, {"HashTag", spec.HashTag},
		{"Seed", seedString(spec.Seed)},
	} {
		if c.value != "" && !slices.Contains(allowed, c.field) {
			return nil, refuse(c.field, c.value)
		}
	}
	if weighted && !slices.Contains(allowed, "weights") {
		return nil, specErr("Servers", "%s cannot express server weights: every weight must be 1", spec.Scheme)
	}
	if named && !slices.Contains(allowed, "names") {
		return nil, specErr("Servers", "%s does not name servers: only twemproxy hashes a server name", spec.Scheme)
	}
	l := &Layout{n: len(servers)}
	switch spec.Scheme {
	case Twemproxy:
		return l, l.twemproxy(spec, servers, ws)
	case LibmemcachedKetama:
		return l, l.libmemcached(spec, servers, ws, weighted)
	case Pymemcache:
		l.kind, l.seed = kindRendezvous, spec.Seed
		for _, s := range servers {
			name := hostPort(s)
			l.nameStr = append(l.nameStr, name)
			l.names = append(l.names, []byte(name+"-"))
		}
		return l, nil
	case PythonMemcached:
		l.kind, l.hash, l.oneZero = kindBuckets, hashCRC32, true
		l.buckets = bucketList(ws)
		return l, nil
	case Gomemcache:
		l.kind, l.hash = kindBuckets, hashCRC32a
		l.buckets = bucketList(ws)
		return l, nil
	case McrouterCRC32:
		l.kind, l.hash = kindBuckets, hashCRC32Low31
		l.buckets = bucketList(ws)
		return l, nil
	default: // McrouterCh3
		if len(servers) > MaxCh3Servers {
			return nil, specErr("Servers", "ch3 addresses at most %d servers", MaxCh3Servers)
		}
		l.kind = kindFurc
		return l, nil
	}
}

// hashCRC32a is the standard CRC-32 (IEEE), named for the schemes that use
// it whole.
var hashCRC32a HashFunc = hashes["crc32a"]

// hashCRC32Low31 is mcrouter's Crc32HashFunc before the modulo: the
// standard CRC-32 with its top bit cleared.
func hashCRC32Low31(key []byte) uint32 { return hashCRC32a(key) & 0x7fffffff }

func seedString(s uint32) string {
	if s == 0 {
		return ""
	}
	return strconv.FormatUint(uint64(s), 10)
}

func duplicate(names []string) string {
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if seen[n] {
			return n
		}
		seen[n] = true
	}
	return ""
}

func hostPort(s Server) string { return s.Host + ":" + strconv.Itoa(s.Port) }

func bucketList(ws []int) []int32 {
	var b []int32
	for i, w := range ws {
		for range w {
			b = append(b, int32(i))
		}
	}
	return b
}

func (l *Layout) twemproxy(spec Spec, servers []Server, ws []int) error {
	hname := spec.Hash
	if hname == "" {
		hname = "fnv1a_64"
	}
	h, ok := hashes[hname]
	if !ok {
		return specErr("Hash", "unknown hash %q (one of %s)", spec.Hash, strings.Join(HashNames, ", "))
	}
	l.hash, l.emptyZero = h, true
	l.md5 = hname == "md5"
	switch len(spec.HashTag) {
	case 0:
	case 2:
		l.tag, l.hasTag = [2]byte{spec.HashTag[0], spec.HashTag[1]}, true
	default:
		return specErr("HashTag", "hash_tag must be two characters, got %q", spec.HashTag)
	}
	names := make([]string, len(servers))
	for i, s := range servers {
		// twemproxy hashes the name when one is given, else host:port,
		// leaving out the port when it is 11211 (as libmemcached did).
		switch {
		case s.Name != "":
			names[i] = s.Name
		case s.Port == 11211:
			names[i] = s.Host
		default:
			names[i] = hostPort(s)
		}
	}
	if dup := duplicate(names); dup != "" {
		return specErr("Servers", "two servers named %q (twemproxy refuses them too)", dup)
	}
	switch spec.Distribution {
	case "", Ketama:
		l.kind = kindContinuum
		l.setContinuum(weightedContinuum(names, ws))
	case Modula:
		// twemproxy sorts its servers by the hashed name (shorter first,
		// then bytewise) when it checks them for duplicates, and keeps
		// that order: the modula buckets follow it.
		l.kind = kindBuckets
		order := make([]int, len(servers))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int {
			return cmp.Or(cmp.Compare(len(names[a]), len(names[b])), strings.Compare(names[a], names[b]))
		})
		for _, i := range order {
			for range ws[i] {
				l.buckets = append(l.buckets, int32(i))
			}
		}
	case Random:
		return &SpecError{Field: "Distribution", Err: ErrNotReproducible}
	default:
		return specErr("Distribution", "unknown distribution %q (ketama or modula)", spec.Distribution)
	}
	return nil
}

func (l *Layout) libmemcached(spec Spec, servers []Server, ws []int, weighted bool) error {
	// libmemcached's default key hash is one_at_a_time; ketama_weighted
	// switches it to md5.
	hname := spec.Hash
	if hname == "" {
		hname = "one_at_a_time"
		if spec.Distribution == KetamaWeighted {
			hname = "md5"
		}
	}
	h, ok := hashes[hname]
	if !ok || !slices.Contains(libmemcachedHashes, hname) {
		return specErr("Hash", "unknown or unchecked hash %q for libmemcached (one of %s)", spec.Hash, strings.Join(libmemcachedHashes, ", "))
	}
	l.kind, l.hash, l.md5 = kindContinuum, h, hname == "md5"
	switch spec.Distribution {
	case "", Ketama:
	case KetamaWeighted:
		weighted = true
	default:
		return specErr("Distribution", "unknown distribution %q (ketama or ketama_weighted)", spec.Distribution)
	}
	names := make([]string, len(servers))
	for i, s := range servers {
		// libmemcached leaves out the default port, like twemproxy.
		if s.Port == 11211 {
			names[i] = s.Host
		} else {
			names[i] = hostPort(s)
		}
	}
	if weighted {
		// Weighted ketama (on with ketama_weighted, or as soon as a
		// server has a weight above 1): MD5 points, four per digest,
		// whatever the key hash.
		l.setContinuum(weightedContinuum(names, ws))
		return nil
	}
	// Unweighted: 100 points per server, one per digest of the key hash.
	var pts []point
	for i, name := range names {
		for p := range 100 {
			pts = append(pts, point{h([]byte(name + "-" + strconv.Itoa(p))), int32(i)})
		}
	}
	sortPoints(pts)
	l.setContinuum(pts)
	return nil
}

// libmemcachedHashes are the key hashes the libmemcached scheme accepts:
// those checked against pylibmc (the others are the same family but were
// not run against libmemcached here).
var libmemcachedHashes = []string{"md5", "one_at_a_time", "crc32", "fnv1_64", "fnv1a_64", "fnv1_32", "fnv1a_32"}

// weightedContinuum is ketama's weighted ring as twemproxy and libmemcached
// build it: 160 points per server scaled by its share of the total weight
// (computed in single precision, as both do), four points per MD5 digest
// of "name-i".
func weightedContinuum(names []string, ws []int) []point {
	total := 0
	for _, w := range ws {
		total += w
	}
	var pts []point
	for i, name := range names {
		pct := float32(ws[i]) / float32(total)
		// Each step rounded to float32 by an explicit conversion, so no
		// fused operation can change the count.
		x := float32(float32(float32(pct*160)/4) * float32(len(names)))
		per := uint32(math.Floor(float64(float32(float64(x) + 0.0000000001))))
		for p := range per {
			d := md5Sum(name + "-" + strconv.FormatUint(uint64(p), 10))
			for x := range 4 {
				v := uint32(d[4*x]) | uint32(d[4*x+1])<<8 | uint32(d[4*x+2])<<16 | uint32(d[4*x+3])<<24
				pts = append(pts, point{v, int32(i)})
			}
		}
	}
	sortPoints(pts)
	return pts
}

// sortPoints orders the ring by value; equal values (a chance of about
// 1 in 10^4 per pool) keep server order, where the incumbents' qsort
// leaves it unspecified.
func sortPoints(p []point) {
	slices.SortStableFunc(p, func(a, b point) int {
		switch {
		case a.value < b.value:
			return -1
		case a.value > b.value:
			return 1
		}
		return 0
	})
}
