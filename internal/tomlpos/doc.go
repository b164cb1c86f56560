// Package tomlpos finds the line of every key of a TOML document, so that a
// configuration error can name the line it comes from.
//
// The TOML decoder reports positions only for syntax errors: not for keys it
// did not decode (a typo), nor for each element of an array of tables, nor
// for a value a validation rule rejects after decoding. Scan reads the
// document once more, line by line, and records each table header and each
// key/value line under two spellings of its path:
//
//   - plain, as the decoder's MetaData names keys: "promotion.rule.prefix";
//   - indexed, as error messages name array elements: "promotion.rule[1].prefix".
//
// Multi-line strings and arrays are skipped, so a line inside one is never
// taken for a key; the keys of a one-line inline table
// (`ttl = { dist = "fixed", value = 60 }`) are recorded on the line that
// holds it. The scan expects a document the decoder has already accepted; on
// a line it does not understand it records nothing, and the caller reports
// the error without a line.
//
// CheckBounds is the other pass a caller makes before decoding: linear in
// the document, it refuses one whose nesting or key lengths exceed
// Limits, which a decoder pays for far more than linearly.
//
// Lines is not safe for concurrent use: Next hands out occurrences in order.
package tomlpos
