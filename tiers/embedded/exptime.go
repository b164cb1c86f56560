package embedded

// Items keep their expiry as an absolute Unix second, so no process start
// time is needed; memcached keeps seconds since its start instead, and the
// two agree on every observable outcome except the ones listed in doc.go.

const (
	// maxDelta is memcached's REALTIME_MAXDELTA: an exptime up to 30 days is
	// relative to now, anything larger is an absolute Unix time.
	maxDelta = 60 * 60 * 24 * 30

	// expiredAt is the exptime of an item that is already dead when it is
	// written (negative TTL, or absolute time in the past). Any value at or
	// below every plausible clock reading works; it must not be 0, which
	// means "never".
	expiredAt int64 = -1
)

// exptimeAt turns a client TTL into an absolute expiry, 0 meaning never.
// Negative TTLs are expired at once, as memcached's meta and text parsers
// map them to a time before the server started.
func exptimeAt(ttl, now int64) int64 {
	switch {
	case ttl == 0:
		return 0
	case ttl < 0:
		return expiredAt
	case ttl > maxDelta:
		return ttl
	default:
		return now + ttl
	}
}

// ttlLeft is what memcached reports for t: -1 for no expiry, else the
// seconds left. An item whose expiry was moved into the past by this very
// request (mg with a negative T) reports 0; memcached prints the unsigned
// wrap-around of a negative number there.
func ttlLeft(exptime, now int64) int64 {
	if exptime == 0 {
		return -1
	}
	if exptime <= now {
		return 0
	}
	return exptime - now
}

// expired reports whether an item with this exptime is dead at now.
func expired(exptime, now int64) bool {
	return exptime != 0 && exptime <= now
}

// flushState is memcached's oldest_live/oldest_cas pair. An item is flushed
// when the flush moment has come (live <= now) and the item was last linked
// or bumped at or before live, or its CAS predates the flush. The state is
// immutable once published; a new flush_all publishes a new one.
type flushState struct {
	// live is the last second whose items the flush invalidates: the
	// requested moment minus one, as in memcached.
	live int64
	// cas is the first CAS that survives an immediate flush; 0 if none. It
	// separates items written earlier in the same second from later ones.
	cas uint64
}

func (f *flushState) flushed(e *entry, now int64) bool {
	if f == nil || f.live > now {
		return false
	}
	return e.atime <= f.live || (f.cas != 0 && e.cas != 0 && e.cas < f.cas)
}
