// Package family maps cache keys to key families: the normalised form of a
// key in which the parts that vary between objects (ids, hashes, versions)
// are replaced by placeholders, so photos:foobar:12345:c1 and
// photos:foobar:678:c2 both belong to photos:foobar:{N}:c{N}. Working sets,
// hotness and the duplication factor are reported per family.
//
// A Normalizer applies the configured rules in order; the first whose
// pattern matches decides the family. A key no rule matches gets the default
// normalisation, defined on bytes as follows:
//
//   - A word is a maximal run of ASCII letters and digits. Every other byte
//     (':', '_', '-', '.', '/', non-ASCII, ...) is copied unchanged and
//     separates words.
//   - A canonical UUID starting at a word boundary (8-4-4-4-12 hex digits
//     joined by '-', not followed by a letter or digit) becomes {H}.
//   - A word of at least 8 characters, made only of hex digits and holding
//     at least one digit 0-9 and at least one letter a-f or A-F, becomes {H}
//     (hashes, object ids). Requiring both keeps words such as "deadbeef" or
//     "facade" and plain numbers out of {H}.
//   - In every other word, each maximal run of digits becomes {N}; letters
//     are kept ("c1" → "c{N}", "v2beta" → "v{N}beta").
//
// A hex id of 8 characters is all digits with probability (10/16)^8 ≈ 2.3 %
// and then normalises to {N}; from 16 characters on the chance is below
// 0.1 %. Configure a rule for families whose short hex ids must not split.
//
// Normalizer is safe for concurrent use. It allocates the family string; the
// sampler calls it on its drainer goroutine, never on the request path.
package family
