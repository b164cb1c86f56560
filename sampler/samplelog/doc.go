// Package samplelog is the on-disk form of sampled accesses: JSON Lines
// files, one object per access, optionally gzip-compressed, written by a
// rotating Writer and read back by Scan. DuckDB, ClickHouse and Spark read
// the files directly; so does `strata report`.
//
// # Record schema
//
// Field names are stable. Every line carries every field below except that
// exactly one of key and key_b64 is present.
//
//	time         string  UTC, RFC 3339 with microseconds: "2026-05-01T12:00:00.000001Z"
//	op           string  get | set | delete | arith | touch
//	key          string  the key, when it is valid UTF-8
//	key_b64      string  the key in standard base64, when it is not valid UTF-8
//	family       string  the key family (see package family)
//	key_size     number  bytes of the key
//	value_size   number  bytes of the value read or written; 0 when none
//	result       string  l1_hit | l2_hit | miss (reads) | none (writes that no tier answered as a hit)
//	promoted     bool    this L2 hit was copied into L1
//	cluster      string  the strata's cluster
//	region       string  the strata's region
//	sample_rate  number  the rate in force when the access was recorded: the key was
//	                     sampled because XXH64(key, seed) mod sample_rate == 0
//
// A reader must ignore unknown fields, so fields can be added without
// breaking old readers; existing fields never change meaning.
//
// # Files
//
// A Writer writes to NAME.part and renames it to NAME when it closes the
// file (on rotation or Close), so a glob of *.jsonl or *.jsonl.gz only ever
// sees complete files. NAME is PREFIX-YYYYMMDDTHHMMSS.ffffffZ-SEQ.jsonl
// (.jsonl.gz with gzip), the time being when the file was opened. A file is
// closed and a new one opened before a record that would take its
// uncompressed size past MaxBytes, and before the first record written
// MaxAge or more after it was opened.
//
// # Ownership
//
// A Writer is used by one goroutine (the sampler's drainer); it is not safe
// for concurrent use. Scan calls its callbacks on the caller's goroutine;
// the *Entry it passes is reused for the next line.
package samplelog
