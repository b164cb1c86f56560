// Package metacodec is the backend side of the memcached meta protocol:
// it spells a tiers.Request as one meta command (mg, ms, md, ma, or
// flush_all) and parses the replies a memcached 1.6 server sends back.
//
// One request always gets exactly one reply: the encoder never asks for
// quiet mode (q), never sends opaque tokens and never sends a line memcached
// could refuse before it knows the length of a data block, so replies can be
// matched to requests first in, first out. Keys memcached cannot take as a
// text token (bytes up to space, DEL) travel base64 encoded with the b flag;
// memcached stores the decoded bytes, so a key means the same item either
// way.
//
// Buffers: AppendRequest appends to the caller's slice and keeps nothing.
// ParseReply reads a borrowed buffer and never consumes part of a reply; a
// Reply it fills aliases that buffer (Reply.Data) until the buffer changes,
// so the caller copies what must outlive it — Fill copies a value into the
// Result's own Value slice. Nothing here allocates on the hit path.
package metacodec
