package handoff

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// Kind is the type of a message.
type Kind uint8

// The messages of the exchange, in order (doc.go).
const (
	Hello  Kind = 1 // successor → running: I want your sockets
	Offer  Kind = 2 // running → successor: these, with the rights attached
	Ready  Kind = 3 // successor → running: I serve on them, go
	Done   Kind = 4 // running → successor: I stopped taking successors
	Refuse Kind = 5 // running → successor: not now (Note says why)
)

func (k Kind) String() string {
	switch k {
	case Hello:
		return "hello"
	case Offer:
		return "offer"
	case Ready:
		return "ready"
	case Done:
		return "done"
	case Refuse:
		return "refuse"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Version is the version of the message format this build speaks. A
// message of another version is refused whole: the exchange is between
// two builds that may differ, and a misread socket would serve clients
// on the wrong port.
const Version = 1

// magic opens every message, so that a stray writer on the socket is told
// apart from a successor of another version.
var magic = [4]byte{'S', 'T', 'H', 'O'}

// Limits of one message: the roles are few and the strings short, and a
// packet larger than maxMessage is not read whole.
const (
	maxEntries = 8
	maxString  = 255
	maxMessage = 4096
)

// Entry names one listening socket of an Offer.
type Entry struct {
	Role  string // "memcached", "admin", "link", "handoff"
	Addr  string // the address the running process was configured with
	Bound string // the address the socket is bound to
}

// Message is one packet of the exchange.
type Message struct {
	Kind Kind
	PID  uint32 // the sender's process id, for the logs
	// Note is free text for the other side's log: the sender's version
	// on Hello and Offer, the reason on Refuse.
	Note    string
	Entries []Entry // Offer only: one per right attached, in order
}

// Encode is the wire form of m:
//
//	"STHO" version:u8 kind:u8 pid:u32be note:str entries:u8 (role:str addr:str bound:str)*
//
// where str is a u8 length and that many bytes. It fails on a string or
// an entry count past the limits.
func (m *Message) Encode() ([]byte, error) {
	if len(m.Entries) > maxEntries {
		return nil, fmt.Errorf("handoff: %d entries, at most %d", len(m.Entries), maxEntries)
	}
	b := append([]byte(nil), magic[:]...)
	b = append(b, Version, byte(m.Kind))
	b = binary.BigEndian.AppendUint32(b, m.PID)
	var err error
	put := func(s string) {
		if len(s) > maxString && err == nil {
			err = fmt.Errorf("handoff: string of %d bytes, at most %d", len(s), maxString)
		}
		b = append(b, byte(len(s)))
		b = append(b, s...)
	}
	put(m.Note)
	b = append(b, byte(len(m.Entries)))
	for _, e := range m.Entries {
		put(e.Role)
		put(e.Addr)
		put(e.Bound)
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

// ErrVersion is a message of another format version, or not a handoff
// message at all.
var ErrVersion = errors.New("handoff: not a message of this version")

// Decode parses one message. It accepts only what Encode produces: a
// known kind, entries only on an Offer, non-empty roles that differ, and
// nothing after the last field.
func Decode(b []byte) (Message, error) {
	var m Message
	if len(b) < 6 || !bytes.Equal(b[:4], magic[:]) {
		return m, fmt.Errorf("%w: no magic", ErrVersion)
	}
	if b[4] != Version {
		return m, fmt.Errorf("%w: version %d, this build speaks %d", ErrVersion, b[4], Version)
	}
	m.Kind = Kind(b[5])
	if m.Kind < Hello || m.Kind > Refuse {
		return m, fmt.Errorf("handoff: unknown message kind %d", b[5])
	}
	r := reader{b: b[6:]}
	m.PID = r.u32()
	m.Note = r.str()
	n := int(r.u8())
	if n > maxEntries {
		return m, fmt.Errorf("handoff: %d entries, at most %d", n, maxEntries)
	}
	if n > 0 && m.Kind != Offer {
		return m, fmt.Errorf("handoff: %s with entries", m.Kind)
	}
	for i := 0; i < n && r.err == nil; i++ {
		e := Entry{Role: r.str(), Addr: r.str(), Bound: r.str()}
		if r.err != nil {
			break
		}
		if e.Role == "" {
			return m, fmt.Errorf("handoff: entry %d has no role", i)
		}
		for _, o := range m.Entries {
			if o.Role == e.Role {
				return m, fmt.Errorf("handoff: role %q twice", e.Role)
			}
		}
		m.Entries = append(m.Entries, e)
	}
	if r.err != nil {
		return m, r.err
	}
	if len(r.b) > 0 {
		return m, fmt.Errorf("handoff: %d bytes after the message", len(r.b))
	}
	return m, nil
}

// reader consumes b; the first short read sets err and every later read
// returns zero values.
type reader struct {
	b   []byte
	err error
}

var errShort = errors.New("handoff: message cut short")

func (r *reader) take(n int) []byte {
	if r.err != nil || len(r.b) < n {
		r.err = errShort
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *reader) u8() uint8 {
	if p := r.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (r *reader) u32() uint32 {
	if p := r.take(4); p != nil {
		return binary.BigEndian.Uint32(p)
	}
	return 0
}

func (r *reader) str() string { return string(r.take(int(r.u8()))) }
