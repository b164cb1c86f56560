package proxy

import (
	"bytes"
	"slices"
	"strconv"
	"sync"

	"github.com/strata-cache/strata/tiers"
)

// detailStats are memcached's per-prefix counters ("stats detail on"):
// for keys holding the prefix delimiter ':', the part before it counts the
// gets, hits, sets and deletes done on its keys. They cost nothing while
// detail is off (one atomic load per completed operation); while on, a
// mutex and a map, as memcached's own cost a lock and a hash table.
type detailStats struct {
	mu sync.Mutex               // guards m
	m  map[string]*prefixCounts // prefix → counts
}

type prefixCounts struct{ get, hit, set, del uint64 }

// detailDelimiter is memcached's default stat_key_prefix.
const detailDelimiter = ':'

// record counts op under its key's prefix, if it has one.
func (d *detailStats) record(op *tiers.Op) {
	if !op.Req.Text {
		return // memcached counts the text commands only
	}
	i := bytes.IndexByte(op.Req.Key, detailDelimiter)
	if i < 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m == nil {
		d.m = map[string]*prefixCounts{}
	}
	pc := d.m[string(op.Req.Key[:i])]
	if pc == nil {
		pc = &prefixCounts{}
		d.m[string(op.Req.Key[:i])] = pc
	}
	switch op.Req.Kind {
	case tiers.KindGet:
		if op.Req.HasTTL && !op.Req.WantValue {
			return // touch: memcached does not count it here (gat it does)
		}
		pc.get++
		if op.Res.Status == tiers.StatusHit {
			pc.hit++
		}
	case tiers.KindSet:
		pc.set++
	case tiers.KindDelete:
		pc.del++
	}
}

// appendDump writes "PREFIX <prefix> get <n> hit <n> set <n> del <n>"
// lines in prefix order.
func (d *detailStats) appendDump(dst []byte) []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	names := make([]string, 0, len(d.m))
	for p := range d.m {
		names = append(names, p)
	}
	slices.Sort(names)
	for _, p := range names {
		pc := d.m[p]
		dst = append(dst, "PREFIX "...)
		dst = append(dst, p...)
		dst = append(dst, " get "...)
		dst = strconv.AppendUint(dst, pc.get, 10)
		dst = append(dst, " hit "...)
		dst = strconv.AppendUint(dst, pc.hit, 10)
		dst = append(dst, " set "...)
		dst = strconv.AppendUint(dst, pc.set, 10)
		dst = append(dst, " del "...)
		dst = strconv.AppendUint(dst, pc.del, 10)
		dst = append(dst, "\r\n"...)
	}
	return dst
}

// observeDetail counts a completed operation while stats detail is on.
func (srv *Server) observeDetail(op *tiers.Op) {
	if srv.detail.Load() {
		srv.detailStats.record(op)
	}
}
