package tlsconn

import (
	"bytes"
	"strconv"
)

// StorageEnd is the length of p up to the end of its first storage
// request's data (text "set|add|replace|append|prepend|cas <key> <flags>
// <exptime> <bytes> ...", meta "ms <key> <datalen> ..."), or all of p
// without one.
//
// A writer to memcached -Z ends a TLS record there. memcached (1.6.18,
// measured) reads a value that spans records straight into the item, one
// record at a time, and does not look again at what is left of the last
// one: a request that shares that record with the value's end waits for
// the next bytes on the socket, which may never come. A record boundary
// at the end of each value leaves the next request in the kernel's
// buffer, where the server's poll finds it.
func StorageEnd(p []byte) int {
	for off := 0; off < len(p); {
		i := bytes.Index(p[off:], crlf)
		if i < 0 {
			return len(p)
		}
		line := p[off : off+i]
		off += i + 2
		size, ok := storageSize(line)
		if !ok {
			continue
		}
		return min(off+size+2, len(p))
	}
	return len(p)
}

var crlf = []byte("\r\n")

// storageSize is the data length a storage command line announces.
func storageSize(line []byte) (int, bool) {
	f := bytes.Fields(line)
	if len(f) < 2 {
		return 0, false
	}
	field := 0
	switch string(f[0]) {
	case "ms":
		field = 2
	case "set", "add", "replace", "append", "prepend", "cas":
		field = 4
	default:
		return 0, false
	}
	if len(f) <= field {
		return 0, false
	}
	size, err := strconv.Atoi(string(f[field]))
	if err != nil || size < 0 {
		return 0, false
	}
	return size, true
}
