// Package keyrule turns a key into the id of its μ-shard: the unit that
// locality routing places in one region and migrates as a whole. A
// request's key goes in; out comes the rule that claimed it and the bytes
// of the key that name the μ-shard, or "no μ-shard", in which case the key
// is served by the local tiers as if locality routing were off.
//
// It sits under control, not proxy, because both sides need the same ids:
// the proxy's router extracts them on the request path, and the placement
// service, the admin API and the benchmarks name μ-shards (and whole-rule
// pins) by them. Dependencies point from proxy down to control, so this is
// the lowest place both can import.
//
// # Rules
//
// Each Rule claims the keys that start with its Prefix; the longest
// matching prefix wins, and only that rule is tried: a key it claims but
// cannot extract a field from has no μ-shard (it is not handed to a
// shorter prefix). A rule extracts the μ-shard's field in one of three
// ways:
//
//   - Tag: the bytes between the first '{' after the prefix and the next
//     '}'; "u:{42}:profile" → "42". An empty tag ("{}") or a missing '}'
//     is no μ-shard.
//   - Delimiter and Field: the key, prefix included, split on Delimiter;
//     field Field, counted from 0. With prefix "u:", delimiter ":" and
//     field 1, "u:42:profile" → "42". An empty or missing field is no
//     μ-shard.
//   - Regex with exactly one capture group, matched against the whole key
//     (anchor it yourself); the group's bytes are the field. An empty or
//     unmatched group is no μ-shard.
//
// # Ids and names
//
// Match returns an ID: the rule's index and the field, a sub-slice of the
// key. It borrows the key: it is valid only while the key's bytes are
// (in the proxy, until the event-loop callback returns). Hash gives a
// 64-bit hash for per-loop caches; AppendName writes the μ-shard's stable
// name, prefix + " " + field, which is what the control store and the
// admin API use. Prefixes hold no space, so a name splits back into rule
// and field at its first space (SplitName), and two μ-shards of different
// rules never share a name.
//
// # Cost
//
// Match on a tag or delimiter rule, and on a key no rule claims, does not
// allocate: it is a scan over the rules (longest prefix first; a handful
// is expected) and one pass over the key. A regex rule costs what Go's
// regexp costs: one small allocation per matched key for the group's
// indexes, since the standard library has no variant that fills a
// caller's slice. Prefer tag or delimiter rules on hot prefixes.
//
// Rules is immutable after New and safe for concurrent use.
package keyrule
