package handoff

import "github.com/strata-cache/strata/tiers"

// MaxRelativeTTL is the largest TTL memcached reads as relative seconds;
// above it memcached reads a TTL as a Unix time. A fill stores a remaining
// TTL, so it must never store one above this.
const MaxRelativeTTL = 30 * 24 * 3600

// Placeholder reports whether a hit is the empty item a lease left (mg N
// marks it W for its taker and Z for everyone after): not a value anyone
// wrote.
func Placeholder(res *tiers.Result) bool {
	return res.Status == tiers.StatusHit && (res.Win || res.AlreadyWon)
}

// CopyResult copies src into dst, keeping dst's value buffer (so a warm
// client Op costs no allocation).
func CopyResult(dst, src *tiers.Result) {
	v := append(dst.Value[:0], src.Value...)
	*dst = *src
	dst.Value = v
}

// FillTTL is the TTL a fill stores at the destination for a value whose
// remaining TTL at the source is remaining (mg t: -1 never expires), and
// whether the fill may store at all. max bounds it (0: no bound):
//
//   - 0 remaining: the value is expiring; no fill.
//   - with a bound, "never" and anything above it become max;
//   - without one, "never" stays never (0), and a remaining TTL above
//     MaxRelativeTTL (an absolute expiry far ahead) is not filled, since
//     stored as it is it would read as a Unix time.
func FillTTL(remaining, max int64) (int64, bool) {
	switch {
	case remaining == 0:
		return 0, false
	case max > 0 && (remaining < 0 || remaining > max):
		return max, true
	case remaining < 0:
		return 0, true
	case remaining > MaxRelativeTTL:
		return 0, false
	}
	return remaining, true
}
