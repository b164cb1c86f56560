// Package configfile reads a TOML configuration file into a caller's
// schema struct and reports every problem of it as "FILE:LINE: key:
// message", so that an operator can go straight to the line.
//
// It holds the rules of the file as a file: how big and how deeply nested
// it may be, which keys exist, how sizes and durations are spelt, and
// where an error is placed. The rules of the values (a port's range, a
// threshold's) are the packages' whose Config they fill; Fields places
// their refusals on the keys.
//
// Use, in order:
//
//  1. Once, SchemaOf(yourSchema{}): the keys, from the `toml` tags. A
//     field whose type implements toml.Unmarshaler is one key, whose inside
//     is the type's own to check (the decoder reports nothing below it).
//  2. Read(path, limits): the file's bytes, refused before decoding when
//     over limits (size, nesting, key length) or when it sets no key.
//  3. schema.Decode(name, data, &v): the values, and the problems of keys
//     no field takes (unknown, or differing only by case, each with a
//     suggestion). A syntax or type error is fatal: decoding stops there,
//     and the caller has nothing to check further.
//  4. Check the values; report each problem with File.ErrAt(key, ...) or,
//     for what a package's Validate returned, Fields(err, keys, section,
//     report) with a FieldKeys from Go field names to file keys.
//  5. Gather everything in an Errors and print it Sorted: in line order,
//     problems without a line last.
//
// Size and Duration are the value types of the file: "64MiB", "250ms".
// Use them as field types of the schema; their String is the file's
// spelling, so a file written back from the values reads the same.
//
// An Error repeats at most MaxShown characters of a key or of one word of
// its message, so a 1 MB value cannot make a 1 MB error.
//
// A Schema is immutable and safe for concurrent use; a File is not (its
// Lines hands out array elements in order).
package configfile
