package protocol

// memcached's administration commands. The parser checks their arguments
// the way memcached does, so a malformed one gets memcached's exact error;
// a well-formed one becomes an OpAdmin whose Args are every token, the
// command's name first, for the proxy to act on (or to refuse with a
// documented error where strata has nothing to act on).

var (
	rMemlimitSmall = reply("MEMLIMIT_TOO_SMALL cannot set maxbytes to less than 8m")
	rSleepTooLong  = reply("CLIENT_ERROR sleep must be one second or less")
	rOK            = reply("OK")
	rBadClass      = reply("BADCLASS invalid src or dst class id")
	rSameClass     = reply("SAME src and dst class are identical")
	rNoSpare       = reply("NOSPARE source class has no spare pages")
)

// maxSlabClass is the highest slab class id memcached 1.6.18 accepts.
const maxSlabClass = 63

// admin parses cache_memlimit, slabs and lru_crawler.
func (p *Parser) admin(line []byte, cmd *Command, name []byte) {
	t := &p.ws.tok
	nt := t.ntokens()
	switch {
	case eq(name, "cache_memlimit"):
		// "cache_memlimit <megabytes> [noreply]"
		if nt != 3 && nt != 4 {
			cmd.fail(rError, false)
			return
		}
		noreply := p.noreply(line)
		mb, ok := parseUint32(t.tok(line, 1))
		if !ok {
			cmd.fail(rError, noreply)
			return
		}
		if mb < 8 {
			cmd.fail(rMemlimitSmall, noreply)
			return
		}
		p.adminArgs(line, cmd, 2)
		cmd.NoReply = noreply
	case eq(name, "slabs"):
		p.slabs(line, cmd)
	case eq(name, "lru_crawler"):
		p.lruCrawler(line, cmd)
	default:
		cmd.fail(rError, false)
	}
}

// slabs: "slabs automove <0|1|2>" and "slabs reassign <src> <dst>". strata
// has no slab classes to move pages between: reassign answers as a
// memcached with no spare page would, after memcached's own checks.
func (p *Parser) slabs(line []byte, cmd *Command) {
	t := &p.ws.tok
	nt := t.ntokens()
	if nt < 4 {
		cmd.fail(rError, false)
		return
	}
	sub := t.tok(line, 1)
	switch {
	case eq(sub, "automove"):
		level, ok := parseUint32(t.tok(line, 2))
		if !ok {
			cmd.fail(rBadFormat, false)
			return
		}
		if level > 2 {
			cmd.fail(rError, false)
			return
		}
		p.adminArgs(line, cmd, 3)
	case eq(sub, "reassign") && nt >= 5:
		src, ok1 := parseInt32(t.tok(line, 2))
		dst, ok2 := parseInt32(t.tok(line, 3))
		if !ok1 || !ok2 {
			cmd.fail(rBadFormat, false)
			return
		}
		switch {
		case src == dst:
			cmd.fail(rSameClass, false)
		case dst < 1 || dst > maxSlabClass || src < -1 || src == 0 || src > maxSlabClass:
			cmd.fail(rBadClass, false)
		default:
			cmd.fail(rNoSpare, false)
		}
	default:
		cmd.fail(rError, false)
	}
}

// lruCrawler: strata's stores reclaim expired items as they meet them and
// have no crawler thread to tune, so enable, disable, sleep and tocrawl
// are accepted (after memcached's checks) and change nothing; crawl and
// metadump go to the proxy, which asks the store.
func (p *Parser) lruCrawler(line []byte, cmd *Command) {
	t := &p.ws.tok
	nt := t.ntokens()
	if nt < 3 {
		cmd.fail(rError, false)
		return
	}
	sub := t.tok(line, 1)
	switch {
	case eq(sub, "enable") || eq(sub, "disable"):
		p.adminArgs(line, cmd, 2)
	case (eq(sub, "sleep") || eq(sub, "tocrawl")) && nt >= 4:
		v, ok := parseUint32(t.tok(line, 2))
		if !ok {
			cmd.fail(rBadFormat, false)
			return
		}
		if eq(sub, "sleep") && v > 1000000 {
			cmd.fail(rSleepTooLong, false)
			return
		}
		cmd.fail(rOK, false)
	case (eq(sub, "crawl") || eq(sub, "metadump")) && nt >= 4:
		p.adminArgs(line, cmd, 3)
	default:
		cmd.fail(rError, false)
	}
}

// adminArgs makes cmd an OpAdmin holding the first n tokens of line.
func (p *Parser) adminArgs(line []byte, cmd *Command, n int) {
	t := &p.ws.tok
	cmd.reserve(len(line))
	cmd.Op = OpAdmin
	for i := 0; i < n && i < t.n; i++ {
		cmd.Args = append(cmd.Args, cmd.own(t.tok(line, i)))
	}
}

// ParseSlabClasses reads the class list of lru_crawler crawl and metadump:
// "all", or class ids 1 to 63 separated by commas. all is true for "all";
// ok is false for anything else.
func ParseSlabClasses(arg []byte, into []bool) (all, ok bool) {
	if eq(arg, "all") {
		return true, true
	}
	if len(arg) == 0 {
		return false, false
	}
	start := 0
	for i := 0; i <= len(arg); i++ {
		if i < len(arg) && arg[i] != ',' {
			continue
		}
		id, good := parseUint32(arg[start:i])
		if !good || id < 1 || id > maxSlabClass {
			return false, false
		}
		if int(id) < len(into) {
			into[id] = true
		}
		start = i + 1
	}
	return false, true
}
