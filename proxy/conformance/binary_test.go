package conformance

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// A binary connection goes through the same per-connection queue as a text
// one: pipelined quiet requests answer in order, only where memcached
// answers, and a pipeline whose replies exceed the connection's outbound
// bound (large values read back while the client is still writing) is
// paused and resumed, never reordered or cut.

// binFrame spells one binary request.
func binFrame(opcode uint8, key, ext, value string, opaque uint32) []byte {
	h := make([]byte, 24, 24+len(ext)+len(key)+len(value))
	h[0], h[1] = 0x80, opcode
	binary.BigEndian.PutUint16(h[2:], uint16(len(key)))
	h[4] = byte(len(ext))
	binary.BigEndian.PutUint32(h[8:], uint32(len(ext)+len(key)+len(value)))
	binary.BigEndian.PutUint32(h[12:], opaque)
	return append(append(append(h, ext...), key...), value...)
}

type binResponse struct {
	opcode      uint8
	status      uint16
	opaque      uint32
	cas         uint64
	extras, key string
	value       string
}

func readBinResponse(r *bufio.Reader) (binResponse, error) {
	var h [24]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return binResponse{}, err
	}
	if h[0] != 0x81 {
		return binResponse{}, fmt.Errorf("response magic %#x", h[0])
	}
	body := make([]byte, binary.BigEndian.Uint32(h[8:]))
	if _, err := io.ReadFull(r, body); err != nil {
		return binResponse{}, err
	}
	ext, key := int(h[4]), int(binary.BigEndian.Uint16(h[2:]))
	return binResponse{opcode: h[1], status: binary.BigEndian.Uint16(h[6:]), opaque: binary.BigEndian.Uint32(h[12:]),
		cas: binary.BigEndian.Uint64(h[16:]), extras: string(body[:ext]), key: string(body[ext : ext+key]),
		value: string(body[ext+key:])}, nil
}

func TestBinaryPipeline(t *testing.T) { forEachTarget(t, testBinaryPipeline) }

func testBinaryPipeline(t *testing.T, addr string) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	const n = 2000
	big := strings.Repeat("v", 200<<10)
	value := func(i int) string {
		if i%100 == 0 {
			return fmt.Sprintf("%d:%s", i, big) // 20 values of 200KiB: 4MiB of replies
		}
		return fmt.Sprint(i)
	}
	var req []byte
	for i := range n {
		req = append(req, binFrame(0x11, fmt.Sprintf("p%d", i), "\x00\x00\x00\x07\x00\x00\x00\x00", value(i), uint32(i))...) // setq
	}
	for i := range n {
		req = append(req, binFrame(0x0d, fmt.Sprintf("p%d", i), "", "", uint32(i))...) // getkq, a hit
		req = append(req, binFrame(0x0d, fmt.Sprintf("miss%d", i), "", "", 1<<31)...)  // getkq, a miss: no answer
	}
	req = append(req, binFrame(0x0a, "", "", "", 0xfeed)...) // noop
	go func() { _, _ = c.Write(req) }()
	r := bufio.NewReader(c)
	for i := range n {
		rs, err := readBinResponse(r)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		if rs.opcode != 0x0d || rs.status != 0 || rs.opaque != uint32(i) || rs.key != fmt.Sprintf("p%d", i) ||
			rs.extras != "\x00\x00\x00\x07" || rs.value != value(i) || rs.cas == 0 {
			t.Fatalf("response %d: opcode %#x status %#x opaque %d key %q extras %q cas %d value of %d bytes",
				i, rs.opcode, rs.status, rs.opaque, rs.key, rs.extras, rs.cas, len(rs.value))
		}
	}
	rs, err := readBinResponse(r)
	if err != nil || rs.opcode != 0x0a || rs.status != 0 || rs.opaque != 0xfeed {
		t.Fatalf("noop: %+v %v", rs, err)
	}
	// A bad magic byte closes the connection, after the answers before it.
	if _, err := c.Write(append(binFrame(0x0a, "", "", "", 1), "get k\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"...)); err != nil {
		t.Fatal(err)
	}
	if rs, err := readBinResponse(r); err != nil || rs.opcode != 0x0a || rs.opaque != 1 {
		t.Fatalf("noop before a bad magic byte: %+v %v", rs, err)
	}
	if _, err := r.ReadByte(); err != io.EOF {
		t.Fatalf("after a bad magic byte: %v, want the connection closed", err)
	}
}
