package embedded

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-cache/strata/tiers"
)

// The scenario tests speak a small subset of the memcached protocol, so the
// same script can be replayed against the store and against a real
// memcached, and the expected replies are memcached's own.
//
// A step is "<command line>" or "<command line>|<data block>", and its reply
// is written the same way: lines joined by '|'. Supported: mg, ms, md, ma
// (flags v c f t s h l u N R T F C I M J D), flush_all, and the text
// commands set, add, replace, append, prepend, cas, get, gets, incr, decr,
// touch, gat, delete. "{now+N}" / "{now-N}" expand to absolute Unix times.

// parsed is one command turned into a request plus what its reply shows.
type parsed struct {
	req     tiers.Request
	cmd     string
	key     string
	outs    []byte // mg/ma reporting flags in wire order
	tok     []string
	data    string
	hasData bool
}

func parseStep(t testing.TB, line string, now int64) parsed {
	t.Helper()
	line = expandNow(line, now)
	cmdline, data, hasData := strings.Cut(line, "|")
	tok := strings.Fields(cmdline)
	p := parsed{cmd: tok[0], tok: tok, data: data, hasData: hasData}
	r := &p.req
	if len(tok) > 1 {
		p.key = tok[1]
		r.Key = []byte(tok[1])
	}
	r.Value = []byte(data)
	num := func(s string) int64 {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("%q: bad number %q", line, s)
		}
		return n
	}
	unum := func(s string) uint64 {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%q: bad number %q", line, s)
		}
		return n
	}
	metaFlags := func(flags []string) {
		for _, f := range flags {
			arg := f[1:]
			switch f[0] {
			case 'v':
				r.WantValue = true
			case 'c':
				r.WantCAS = true
			case 'f':
				r.WantFlags = true
			case 't':
				r.WantTTL = true
			case 's':
				r.WantSize = true
			case 'h':
				r.WantHit = true
			case 'l':
				r.WantLastAccess = true
			case 'u':
				r.NoBump = true
			case 'N':
				r.Vivify, r.VivifyTTL = true, num(arg)
			case 'R':
				r.Recache, r.RecacheTTL = true, num(arg)
			case 'T':
				r.HasTTL, r.TTL = true, num(arg)
			case 'F':
				r.ClientFlags = uint32(unum(arg))
			case 'C':
				r.HasCompareCAS, r.CompareCAS = true, unum(arg)
			case 'I':
				r.Invalidate = true
			case 'J':
				r.Initial = unum(arg)
			case 'D':
				r.Delta = unum(arg)
			case 'M':
				switch p.cmd + arg {
				case "msS":
					r.Mode = tiers.ModeSet
				case "msE":
					r.Mode = tiers.ModeAdd
				case "msR":
					r.Mode = tiers.ModeReplace
				case "msA":
					r.Mode = tiers.ModeAppend
				case "msP":
					r.Mode = tiers.ModePrepend
				case "maI", "ma+":
					r.Mode = tiers.ModeIncr
				case "maD", "ma-":
					r.Mode = tiers.ModeDecr
				default:
					t.Fatalf("%q: bad mode %q", line, f)
				}
			default:
				t.Fatalf("%q: unsupported flag %q", line, f)
			}
			if strings.ContainsRune("tcfslh", rune(f[0])) {
				p.outs = append(p.outs, f[0])
			}
		}
	}
	textStore := func(mode tiers.Mode) {
		r.Kind, r.Mode = tiers.KindSet, mode
		r.ClientFlags = uint32(unum(tok[2]))
		r.TTL, r.HasTTL = num(tok[3]), true
	}
	r.Text = !strings.HasPrefix(p.cmd, "m")
	switch p.cmd {
	case "mg":
		r.Kind = tiers.KindGet
		metaFlags(tok[2:])
	case "ms":
		r.Kind = tiers.KindSet
		metaFlags(tok[2:])
	case "md":
		r.Kind = tiers.KindDelete
		metaFlags(tok[2:])
	case "ma":
		r.Kind, r.Delta, r.Mode = tiers.KindArith, 1, tiers.ModeIncr
		metaFlags(tok[2:])
	case "flush_all":
		r.Kind = tiers.KindFlush
		if len(tok) > 1 {
			r.TTL = num(tok[1])
		}
		r.Key = nil
	case "set":
		textStore(tiers.ModeSet)
	case "add":
		textStore(tiers.ModeAdd)
	case "replace":
		textStore(tiers.ModeReplace)
	case "append":
		textStore(tiers.ModeAppend)
	case "prepend":
		textStore(tiers.ModePrepend)
	case "cas":
		textStore(tiers.ModeSet)
		r.HasCompareCAS, r.CompareCAS = true, unum(tok[4])
	case "get", "gets":
		r.Kind, r.WantValue, r.WantFlags, r.WantCAS = tiers.KindGet, true, true, p.cmd == "gets"
	case "gat", "gats":
		r.Kind, r.WantValue, r.WantFlags, r.WantCAS = tiers.KindGet, true, true, p.cmd == "gats"
		r.HasTTL, r.TTL = true, num(tok[1])
		p.key, r.Key = tok[2], []byte(tok[2])
	case "touch":
		r.Kind, r.HasTTL, r.TTL = tiers.KindGet, true, num(tok[2])
	case "incr", "decr":
		r.Kind, r.Delta, r.Mode = tiers.KindArith, unum(tok[2]), tiers.ModeIncr
		if p.cmd == "decr" {
			r.Mode = tiers.ModeDecr
		}
	case "delete":
		r.Kind = tiers.KindDelete
	default:
		t.Fatalf("%q: unsupported command", line)
	}
	return p
}

// wire spells p for memcached: storage commands get their data length, and
// every non-zero compare CAS is shifted by casBase, the CAS memcached had
// handed out before the scenario began.
func (p parsed) wire(casBase uint64) string {
	tok := append([]string(nil), p.tok...)
	shift := func(s string) string {
		n, _ := strconv.ParseUint(s, 10, 64)
		if n == 0 {
			return s
		}
		return strconv.FormatUint(n+casBase, 10)
	}
	n := strconv.Itoa(len(p.data))
	switch p.cmd {
	case "ms":
		for i := 2; i < len(tok); i++ {
			if tok[i][0] == 'C' {
				tok[i] = "C" + shift(tok[i][1:])
			}
		}
		tok = append(tok[:2], append([]string{n}, tok[2:]...)...)
	case "md", "ma":
		for i := 2; i < len(tok); i++ {
			if tok[i][0] == 'C' {
				tok[i] = "C" + shift(tok[i][1:])
			}
		}
	case "set", "add", "replace", "append", "prepend":
		tok = append(tok, n)
	case "cas":
		tok = []string{tok[0], tok[1], tok[2], tok[3], n, shift(tok[4])}
	}
	s := strings.Join(tok, " ") + "\r\n"
	if p.hasData {
		s += p.data + "\r\n"
	}
	return s
}

func expandNow(line string, now int64) string {
	for {
		i := strings.Index(line, "{now")
		if i < 0 {
			return line
		}
		j := strings.IndexByte(line[i:], '}')
		off, err := strconv.ParseInt(line[i+4:i+j], 10, 64)
		if err != nil {
			panic("bad {now} offset in " + line)
		}
		line = line[:i] + strconv.FormatInt(now+off, 10) + line[i+j+1:]
	}
}

// reply spells res the way memcached 1.6.18 answers the command.
func reply(p parsed, res *tiers.Result) string {
	r := &p.req
	st := res.Status
	switch p.cmd {
	case "mg":
		if st == tiers.StatusMiss {
			return "EN"
		}
		var b strings.Builder
		if r.WantValue {
			fmt.Fprintf(&b, "VA %d", res.Size)
		} else {
			b.WriteString("HD")
		}
		for _, o := range p.outs {
			switch o {
			case 's':
				fmt.Fprintf(&b, " s%d", res.Size)
			case 't':
				fmt.Fprintf(&b, " t%d", res.TTL)
			case 'c':
				fmt.Fprintf(&b, " c%d", res.CAS)
			case 'f':
				fmt.Fprintf(&b, " f%d", res.ClientFlags)
			case 'l':
				fmt.Fprintf(&b, " l%d", res.LastAccess)
			case 'h':
				fmt.Fprintf(&b, " h%d", b2i(res.Fetched))
			}
		}
		if res.AlreadyWon {
			b.WriteString(" Z")
		}
		if res.Stale {
			b.WriteString(" X")
		}
		if res.Win {
			b.WriteString(" W")
		}
		if r.WantValue {
			b.WriteString("|" + string(res.Value))
		}
		return b.String()
	case "ms":
		s := map[tiers.Status]string{tiers.StatusStored: "HD", tiers.StatusNotStored: "NS",
			tiers.StatusExists: "EX", tiers.StatusNotFound: "NF"}[st]
		switch st {
		case tiers.StatusTooLarge:
			return "SERVER_ERROR object too large for cache"
		case tiers.StatusNoMemory:
			return "SERVER_ERROR out of memory storing object"
		}
		if r.WantCAS {
			s += fmt.Sprintf(" c%d", res.CAS)
		}
		return s
	case "md":
		return map[tiers.Status]string{tiers.StatusStored: "HD", tiers.StatusMiss: "NF", tiers.StatusExists: "EX"}[st]
	case "ma":
		switch st {
		case tiers.StatusMiss:
			return "NF"
		case tiers.StatusExists:
			return "EX"
		case tiers.StatusNonNumeric:
			return "CLIENT_ERROR cannot increment or decrement non-numeric value"
		case tiers.StatusNoMemory:
			return "SERVER_ERROR out of memory"
		}
		var b strings.Builder
		if r.WantValue {
			fmt.Fprintf(&b, "VA %d", len(res.Value))
		} else {
			b.WriteString("HD")
		}
		for _, o := range p.outs {
			switch o {
			case 't':
				fmt.Fprintf(&b, " t%d", res.TTL)
			case 'c':
				fmt.Fprintf(&b, " c%d", res.CAS)
			}
		}
		if r.WantValue {
			b.WriteString("|" + string(res.Value))
		}
		return b.String()
	case "flush_all":
		return "OK"
	case "set", "add", "replace", "append", "prepend", "cas":
		switch st {
		case tiers.StatusTooLarge:
			return "SERVER_ERROR object too large for cache"
		case tiers.StatusNoMemory:
			return "SERVER_ERROR out of memory storing object"
		}
		return map[tiers.Status]string{tiers.StatusStored: "STORED", tiers.StatusNotStored: "NOT_STORED",
			tiers.StatusExists: "EXISTS", tiers.StatusNotFound: "NOT_FOUND"}[st]
	case "get", "gets", "gat", "gats":
		if st == tiers.StatusMiss {
			return "END"
		}
		line := fmt.Sprintf("VALUE %s %d %d", p.key, res.ClientFlags, res.Size)
		if r.WantCAS {
			line += fmt.Sprintf(" %d", res.CAS)
		}
		return line + "|" + string(res.Value) + "|END"
	case "touch":
		if st == tiers.StatusMiss {
			return "NOT_FOUND"
		}
		return "TOUCHED"
	case "incr", "decr":
		switch st {
		case tiers.StatusMiss:
			return "NOT_FOUND"
		case tiers.StatusNonNumeric:
			return "CLIENT_ERROR cannot increment or decrement non-numeric value"
		}
		return string(res.Value)
	case "delete":
		if st == tiers.StatusMiss {
			return "NOT_FOUND"
		}
		return "DELETED"
	}
	return "?"
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
