package metacodec

import (
	"bytes"
	"errors"
	"reflect"
	"strconv"
	"testing"

	"github.com/strata-cache/strata/tiers"
)

const maxValue = 1 << 20

// appendReply spells r the way memcached does, flags in a fixed order. The
// tests use it as the inverse of ParseReply.
func appendReply(dst []byte, r *Reply) []byte {
	switch r.Code {
	case CodeOK:
		return append(dst, "OK\r\n"...)
	case CodeVersion:
		return append(append(append(dst, "VERSION "...), r.Data...), "\r\n"...)
	case CodeError:
		if len(r.Data) == 0 {
			return append(dst, "ERROR\r\n"...)
		}
		return append(append(append(dst, "ERROR "...), r.Data...), "\r\n"...)
	case CodeClientError, CodeServerError:
		return append(append(append(append(dst, r.Code.String()...), ' '), r.Data...), "\r\n"...)
	}
	dst = append(dst, r.Code.String()...)
	if r.Code == CodeVA {
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(len(r.Data)), 10)
	}
	if r.Has&HasTTL != 0 {
		dst = strconv.AppendInt(append(dst, " t"...), r.TTL, 10)
	}
	if r.Has&HasCAS != 0 {
		dst = strconv.AppendUint(append(dst, " c"...), r.CAS, 10)
	}
	if r.Has&HasFlags != 0 {
		dst = strconv.AppendUint(append(dst, " f"...), uint64(r.ClientFlags), 10)
	}
	if r.Has&HasSize != 0 {
		dst = strconv.AppendInt(append(dst, " s"...), int64(r.Size), 10)
	}
	if r.Has&HasFetched != 0 {
		if r.Fetched {
			dst = append(dst, " h1"...)
		} else {
			dst = append(dst, " h0"...)
		}
	}
	if r.Has&HasLastAccess != 0 {
		dst = strconv.AppendInt(append(dst, " l"...), r.LastAccess, 10)
	}
	if r.Win {
		dst = append(dst, " W"...)
	}
	if r.Stale {
		dst = append(dst, " X"...)
	}
	if r.AlreadyWon {
		dst = append(dst, " Z"...)
	}
	if r.KeyBinary {
		dst = append(dst, " b"...)
	}
	dst = append(dst, "\r\n"...)
	if r.Code == CodeVA {
		dst = append(append(dst, r.Data...), "\r\n"...)
	}
	return dst
}

// replySamples are complete replies as memcached 1.6.18 sends them.
var replySamples = []string{
	"VA 5 f0 t-1\r\nhello\r\n",
	"VA 0\r\n\r\n",
	"VA 4 t59 f7 c123 s4\r\nab\r\n\r\n", // a value that contains CRLF
	"HD\r\n",
	"HD c99\r\n",
	"HD t10 h1 l3 s100 W X Z\r\n",
	"EN\r\n",
	"NS\r\n",
	"EX\r\n",
	"NF\r\n",
	"MN\r\n",
	"OK\r\n",
	"VERSION 1.6.18\r\n",
	"ERROR\r\n",
	"CLIENT_ERROR cannot increment or decrement non-numeric value\r\n",
	"SERVER_ERROR object too large for cache\r\n",
	"SERVER_ERROR out of memory storing object\r\n",
	"HD kZm9v b Oopaque\r\n", // returned key and opaque are skipped
}

func TestParseEveryPrefix(t *testing.T) {
	var r Reply
	for _, s := range replySamples {
		buf := []byte(s)
		for k := 0; k < len(buf); k++ {
			n, err := ParseReply(buf[:k], maxValue, &r)
			if n != 0 || err != nil {
				t.Fatalf("%q cut at %d: n=%d err=%v, want 0, nil", s, k, n, err)
			}
		}
		n, err := ParseReply(buf, maxValue, &r)
		if n != len(buf) || err != nil {
			t.Fatalf("%q: n=%d err=%v, want %d", s, n, err, len(buf))
		}
	}
}

func TestParsePipeline(t *testing.T) {
	var all []byte
	for _, s := range replySamples {
		all = append(all, s...)
	}
	// Feed the stream in chunks of every size; a reader keeps the unparsed
	// tail, as a connection's inbound buffer does.
	for chunk := 1; chunk <= 17; chunk++ {
		var pending []byte
		got := 0
		for off := 0; off < len(all); off += chunk {
			pending = append(pending, all[off:min(off+chunk, len(all))]...)
			for {
				var r Reply
				n, err := ParseReply(pending, maxValue, &r)
				if err != nil {
					t.Fatalf("chunk %d: %v at %q", chunk, err, pending)
				}
				if n == 0 {
					break
				}
				if want := replySamples[got]; string(pending[:n]) != want {
					t.Fatalf("chunk %d: reply %d is %q, want %q", chunk, got, pending[:n], want)
				}
				pending = pending[n:]
				got++
			}
		}
		if got != len(replySamples) || len(pending) != 0 {
			t.Fatalf("chunk %d: parsed %d of %d replies, %d bytes left", chunk, got, len(replySamples), len(pending))
		}
	}
}

func TestParseFields(t *testing.T) {
	var r Reply
	n, err := ParseReply([]byte("VA 4 t59 f7 c123 s4 h1 l2 W Z\r\nab\r\n\r\nHD\r\n"), maxValue, &r)
	if err != nil || n != 37 {
		t.Fatalf("n=%d err=%v", n, err)
	}
	want := Reply{Code: CodeVA, Data: []byte("ab\r\n"), Has: HasTTL | HasFlags | HasCAS | HasSize | HasFetched | HasLastAccess,
		TTL: 59, ClientFlags: 7, CAS: 123, Size: 4, Fetched: true, LastAccess: 2, Win: true, AlreadyWon: true}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("got %+v\nwant %+v", r, want)
	}
}

func TestParseMalformed(t *testing.T) {
	bad := []string{
		"XX\r\n",
		"hello",              // cannot start a reply
		"HD\n",               // bare newline
		"\r\n",               // empty line
		"VA\r\n",             // no size
		"VA x\r\n",           // bad size
		"VA 2\r\nabc\r\n",    // data longer than announced
		"VA 99999999999\r\n", // above maxValue
		"HD tx\r\n",          // bad TTL
		"HD f4294967296\r\n",
		"HD c18446744073709551616\r\n",
		"HD h2\r\n",
		"HDX\r\n",
		"OKAY\r\n",
		string(bytes.Repeat([]byte("V"), 1)) + "A 1 " + string(bytes.Repeat([]byte("t"), MaxLine)),
	}
	for _, s := range bad {
		var r Reply
		if n, err := ParseReply([]byte(s), maxValue, &r); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: n=%d err=%v, want ErrMalformed", s, n, err)
		}
	}
}

func TestFill(t *testing.T) {
	get := &tiers.Request{Kind: tiers.KindGet, WantValue: true}
	set := &tiers.Request{Kind: tiers.KindSet}
	del := &tiers.Request{Kind: tiers.KindDelete}
	arith := &tiers.Request{Kind: tiers.KindArith, WantValue: true}
	flush := &tiers.Request{Kind: tiers.KindFlush}
	cases := []struct {
		req    *tiers.Request
		reply  string
		status tiers.Status
		err    error
	}{
		{get, "VA 2 f5 t-1\r\nhi\r\n", tiers.StatusHit, nil},
		{get, "HD\r\n", tiers.StatusHit, nil},
		{get, "EN\r\n", tiers.StatusMiss, nil},
		{get, "NS\r\n", tiers.StatusError, ErrUnexpected},
		{set, "HD\r\n", tiers.StatusStored, nil},
		{set, "NS\r\n", tiers.StatusNotStored, nil},
		{set, "EX\r\n", tiers.StatusExists, nil},
		{set, "NF\r\n", tiers.StatusNotFound, nil},
		{set, "SERVER_ERROR object too large for cache\r\n", tiers.StatusTooLarge, nil},
		{set, "SERVER_ERROR out of memory storing object\r\n", tiers.StatusNoMemory, nil},
		{set, "EN\r\n", tiers.StatusError, ErrUnexpected},
		{del, "HD\r\n", tiers.StatusStored, nil},
		{del, "NF\r\n", tiers.StatusMiss, nil},
		{del, "EX\r\n", tiers.StatusExists, nil},
		{arith, "VA 2\r\n10\r\n", tiers.StatusStored, nil},
		{arith, "HD\r\n", tiers.StatusStored, nil},
		{arith, "NF\r\n", tiers.StatusMiss, nil},
		{arith, "NS\r\n", tiers.StatusNotStored, nil},
		{arith, "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n", tiers.StatusNonNumeric, nil},
		{arith, "SERVER_ERROR Out of memory allocating new item\r\n", tiers.StatusNoMemory, nil},
		{flush, "OK\r\n", tiers.StatusStored, nil},
		{flush, "HD\r\n", tiers.StatusError, ErrUnexpected},
	}
	for _, c := range cases {
		var rp Reply
		if _, err := ParseReply([]byte(c.reply), maxValue, &rp); err != nil {
			t.Fatalf("%q: %v", c.reply, err)
		}
		res := tiers.Result{Value: []byte("old"), Err: errors.New("stale")}
		err := Fill(&res, c.req, &rp)
		if res.Status != c.status || !errors.Is(err, c.err) {
			t.Errorf("kind %d %q: status %v err %v, want %v %v", c.req.Kind, c.reply, res.Status, err, c.status, c.err)
		}
	}

	// Error lines without a status of their own keep their text.
	for _, s := range []string{"ERROR\r\n", "CLIENT_ERROR bad data chunk\r\n", "SERVER_ERROR busy\r\n"} {
		var rp Reply
		_, _ = ParseReply([]byte(s), maxValue, &rp)
		var res tiers.Result
		err := Fill(&res, get, &rp)
		var re *ReplyError
		if !errors.As(err, &re) || res.Status != tiers.StatusError || re.Error()+"\r\n" != s {
			t.Errorf("%q: status %v err %v", s, res.Status, err)
		}
	}

	// A hit copies the value and the facts into the Result.
	var rp Reply
	buf := []byte("VA 3 f9 t30 c77\r\nabc\r\n")
	_, _ = ParseReply(buf, maxValue, &rp)
	res := tiers.Result{Value: make([]byte, 0, 16)}
	if err := Fill(&res, get, &rp); err != nil {
		t.Fatal(err)
	}
	buf[17] = 'X' // the Result must not alias the parse buffer
	if string(res.Value) != "abc" || res.ClientFlags != 9 || res.TTL != 30 || res.CAS != 77 || res.Size != 3 {
		t.Errorf("hit filled %+v", res)
	}
}

// TestHitDoesNotAllocate: parsing a hit and filling a warm Result is the
// steady state of every get, and costs no allocation.
func TestHitDoesNotAllocate(t *testing.T) {
	buf := []byte("VA 100 f0 t-1\r\n" + string(bytes.Repeat([]byte("v"), 100)) + "\r\n")
	req := &tiers.Request{Kind: tiers.KindGet, WantValue: true, WantFlags: true, WantTTL: true}
	res := tiers.Result{Value: make([]byte, 0, 128)}
	var rp Reply
	n := testing.AllocsPerRun(1000, func() {
		if _, err := ParseReply(buf, maxValue, &rp); err != nil {
			t.Fatal(err)
		}
		if err := Fill(&res, req, &rp); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Errorf("a hit allocates %.1f times", n)
	}
}

func BenchmarkParseHit(b *testing.B) {
	buf := []byte("VA 100 f0 t-1\r\n" + string(bytes.Repeat([]byte("v"), 100)) + "\r\n")
	req := &tiers.Request{Kind: tiers.KindGet, WantValue: true}
	res := tiers.Result{Value: make([]byte, 0, 128)}
	var rp Reply
	b.ReportAllocs()
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		_, _ = ParseReply(buf, maxValue, &rp)
		_ = Fill(&res, req, &rp)
	}
}
