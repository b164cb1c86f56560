package locsvc

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/strata-cache/strata/control/store"
)

// Capacity is one member's report of its region's cache memory: Used
// bytes of Limit, as measured At (on the member's clock). Members of one
// region share its L2, so they report the same pool.
type Capacity struct {
	Region      string
	Used, Limit uint64
	At          time.Time
}

// The encoding, version 1:
//
//	'K' 1 varint(unix milliseconds) str(region) uvarint(used) uvarint(limit)
//
// Limit is never 0: a member that knows no size reports nothing.
const (
	capacityMagic   = 'K'
	capacityVersion = 1
)

var errCapacity = errors.New("locsvc: corrupt capacity report")

// EncodeCapacity returns the report's row value.
func EncodeCapacity(c Capacity) []byte {
	b := make([]byte, 0, 2+10+1+len(c.Region)+20)
	b = append(b, capacityMagic, capacityVersion)
	b = binary.AppendVarint(b, c.At.UnixMilli())
	b = binary.AppendUvarint(b, uint64(len(c.Region)))
	b = append(b, c.Region...)
	b = binary.AppendUvarint(b, c.Used)
	return binary.AppendUvarint(b, c.Limit)
}

// DecodeCapacity parses a row value written by EncodeCapacity; anything
// else is an error. Times come back in UTC, to the millisecond.
func DecodeCapacity(v []byte) (Capacity, error) {
	if len(v) < 2 || v[0] != capacityMagic || v[1] != capacityVersion {
		return Capacity{}, fmt.Errorf("%w: header", errCapacity)
	}
	d := v[2:]
	ms, k := binary.Varint(d)
	if k <= 0 {
		return Capacity{}, fmt.Errorf("%w: time", errCapacity)
	}
	d = d[k:]
	var c Capacity
	c.At = time.UnixMilli(ms).UTC()
	var ok bool
	if c.Region, d, ok = str(d); !ok || c.Region == "" {
		return Capacity{}, fmt.Errorf("%w: region", errCapacity)
	}
	if c.Used, k = binary.Uvarint(d); k <= 0 {
		return Capacity{}, fmt.Errorf("%w: used", errCapacity)
	}
	d = d[k:]
	if c.Limit, k = binary.Uvarint(d); k <= 0 || c.Limit == 0 {
		return Capacity{}, fmt.Errorf("%w: limit", errCapacity)
	}
	if d = d[k:]; len(d) != 0 {
		return Capacity{}, fmt.Errorf("%w: %d trailing bytes", errCapacity, len(d))
	}
	return c, nil
}

// capacityReporter is the state of the capacity row between two
// intervals; owned by shipLoop.
type capacityReporter struct {
	// last is what the row holds, on lease; lease 0: no row written on
	// the current session.
	last  Capacity
	lease store.LeaseID
	// since counts the intervals since the row was written.
	since int
}

// reportCapacity writes capacity/<member> on the session lease when the
// measurement changed, when the session is new (the row went with the
// old lease), or every CapacityEvery intervals so that its time stays
// fresh for the placement service. A member without Config.Capacity, or
// whose measurement is not ok, writes nothing.
func (s *Service) reportCapacity() {
	r := &s.capacity
	r.since++
	if s.cfg.Capacity == nil {
		return
	}
	used, limit, ok := s.cfg.Capacity()
	lease := store.LeaseID(s.counters.lease.Load())
	if !ok || limit == 0 || lease == 0 {
		return
	}
	if lease == r.lease && used == r.last.Used && limit == r.last.Limit && r.since < s.cfg.CapacityEvery {
		return
	}
	c := Capacity{Region: s.cfg.Region, Used: used, Limit: limit, At: s.cfg.Now()}
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.ReadTimeout)
	defer cancel()
	if _, err := s.st.Txn(ctx, nil, []store.Op{store.PutLease(s.layout.CapacityKey(s.cfg.Member), EncodeCapacity(c), lease)}); err != nil {
		if s.ctx.Err() == nil {
			s.cfg.Logger.Warn("locality capacity", "err", err)
		}
		return // tried again next interval
	}
	r.last, r.lease, r.since = c, lease, 0
	s.capacityWrites.Add(1)
}
