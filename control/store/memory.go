package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// MemoryOptions configures a Memory store. The zero value is ready to use.
type MemoryOptions struct {
	// Now is the clock lease deadlines are measured on. Default time.Now.
	// Tests inject a manual clock and call ExpireLeases after moving it.
	Now func() time.Time
	// History is how many revisions of changes are kept for watches that
	// resume from an older revision; a watch further behind gets a Reset,
	// as etcd's compaction does. Default 10000.
	History int64
}

// Memory is the in-process store: the state of one strata that runs
// alone. It plays the part of the etcd server; each component talks to
// it through its own client (Connect), so that a client can be closed or
// partitioned on its own and its leases then expire the way an etcd
// client's do when its process dies.
//
// Leases are kept alive for as long as their client is connected; a
// closed or partitioned client's leases get a deadline of ttl from that
// moment, checked on every operation and by ExpireLeases.
type Memory struct {
	now     func() time.Time
	history int64

	mu       sync.Mutex // guards everything below
	rev      int64
	rows     map[string]Row
	log      []logEntry // changes of revisions >= firstRev, in revision order
	firstRev int64      // watches from a revision below it must reset
	leases   map[LeaseID]*memLease
	lastID   LeaseID
	// changed is closed and replaced whenever a watcher may have something
	// new to see: a revision, a client closed or healed.
	changed chan struct{}
}

type logEntry struct {
	rev    int64
	change Change
}

type memLease struct {
	id       LeaseID
	ttl      time.Duration
	owner    *MemoryClient
	deadline time.Time // zero while kept alive
	session  *memSession
	// granted: a GrantLease lease, whose deadline is set at the grant and
	// never cleared (nobody keeps it alive).
	granted bool
}

// NewMemory returns an empty in-memory store.
func NewMemory(opts MemoryOptions) *Memory {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.History <= 0 {
		opts.History = 10000
	}
	return &Memory{
		now:      opts.Now,
		history:  opts.History,
		rows:     make(map[string]Row),
		firstRev: 1,
		leases:   make(map[LeaseID]*memLease),
		changed:  make(chan struct{}),
	}
}

// Connect returns a new client of m: one process's view of the store.
func (m *Memory) Connect() *MemoryClient { return &MemoryClient{m: m} }

// Revision returns the current store revision.
func (m *Memory) Revision() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rev
}

// Compact drops the history of revisions below rev: watches that have
// not read them yet get a Reset. It mirrors etcd's compaction.
func (m *Memory) Compact(rev int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.compactLocked(rev)
	m.notifyLocked()
}

func (m *Memory) compactLocked(rev int64) {
	if rev > m.rev+1 {
		rev = m.rev + 1
	}
	if rev <= m.firstRev {
		return
	}
	i := sort.Search(len(m.log), func(i int) bool { return m.log[i].rev >= rev })
	m.log = append(m.log[:0:0], m.log[i:]...)
	m.firstRev = rev
}

// ExpireLeases revokes every lease whose deadline has passed on the
// injected clock. Operations call it too; a test that moves a manual
// clock calls it so that watchers see the expiry without another write.
func (m *Memory) ExpireLeases() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expireLocked()
}

func (m *Memory) expireLocked() {
	now := m.now()
	for id, l := range m.leases {
		if !l.deadline.IsZero() && !now.Before(l.deadline) {
			m.revokeLocked(id)
		}
	}
}

// revokeLocked deletes the lease's rows as one revision and ends its
// session.
func (m *Memory) revokeLocked(id LeaseID) {
	l, ok := m.leases[id]
	if !ok {
		return
	}
	delete(m.leases, id)
	var keys []string
	for k, r := range m.rows {
		if r.Lease == id {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) > 0 {
		m.rev++
		for _, k := range keys {
			delete(m.rows, k)
			m.log = append(m.log, logEntry{m.rev, Change{Deleted: true, Row: Row{Key: k, ModRevision: m.rev}}})
		}
		m.trimLocked()
	}
	if l.session != nil {
		l.session.endLocked()
	}
	m.notifyLocked()
}

// startDeadlinesLocked gives c's leases a deadline: c stopped keeping
// them alive.
func (m *Memory) startDeadlinesLocked(c *MemoryClient) {
	now := m.now()
	for _, l := range m.leases {
		if l.owner == c && l.deadline.IsZero() {
			l.deadline = now.Add(l.ttl)
		}
	}
}

func (m *Memory) trimLocked() {
	if m.rev-m.firstRev >= m.history {
		m.compactLocked(m.rev - m.history + 1)
	}
}

func (m *Memory) notifyLocked() {
	close(m.changed)
	m.changed = make(chan struct{})
}

func (m *Memory) rowLocked(key string) Row {
	if r, ok := m.rows[key]; ok {
		return r
	}
	return Row{Key: key}
}

func (m *Memory) listLocked(prefix string) []Row {
	var out []Row
	for k, r := range m.rows {
		if strings.HasPrefix(k, prefix) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func (m *Memory) txnLocked(conds []Cond, ops []Op) (TxnResult, error) {
	for _, c := range conds {
		if !c.Holds(m.rowLocked(c.Key)) {
			cur := make([]Row, len(conds))
			for i, c := range conds {
				cur[i] = m.rowLocked(c.Key)
			}
			return TxnResult{Revision: m.rev, Current: cur}, nil
		}
	}
	// As etcd: one transaction may not write a key twice, nor put a key
	// that one of its prefix deletes covers.
	seen := make(map[string]bool, len(ops))
	for _, op := range ops {
		if seen[op.Key] {
			return TxnResult{}, fmt.Errorf("store: key %q twice in one transaction", op.Key)
		}
		seen[op.Key] = true
		if op.Delete && op.Prefix {
			for _, o := range ops {
				if !o.Delete && strings.HasPrefix(o.Key, op.Key) {
					return TxnResult{}, fmt.Errorf("store: put of %q under deleted prefix %q in one transaction", o.Key, op.Key)
				}
			}
		}
		if op.Lease != 0 {
			if _, ok := m.leases[op.Lease]; !ok {
				return TxnResult{}, fmt.Errorf("store: lease %x not found", op.Lease)
			}
		}
	}
	next := m.rev + 1
	var changes []Change
	for _, op := range ops {
		switch {
		case op.Delete && op.Prefix:
			for _, r := range m.listLocked(op.Key) {
				delete(m.rows, r.Key)
				changes = append(changes, Change{Deleted: true, Row: Row{Key: r.Key, ModRevision: next}})
			}
		case op.Delete:
			if _, ok := m.rows[op.Key]; ok {
				delete(m.rows, op.Key)
				changes = append(changes, Change{Deleted: true, Row: Row{Key: op.Key, ModRevision: next}})
			}
		default:
			r := m.rowLocked(op.Key)
			if !r.Exists() {
				r.CreateRevision, r.Version = next, 0
			}
			r.Version++
			r.ModRevision = next
			r.Value = append([]byte(nil), op.Value...)
			r.Lease = op.Lease
			m.rows[op.Key] = r
			changes = append(changes, Change{Row: r})
		}
	}
	if len(changes) > 0 {
		m.rev = next
		for _, c := range changes {
			m.log = append(m.log, logEntry{next, c})
		}
		m.trimLocked()
		m.notifyLocked()
	}
	return TxnResult{Succeeded: true, Revision: m.rev}, nil
}

// MemoryClient is one process's connection to a Memory store. It
// implements Store.
type MemoryClient struct {
	m *Memory
	// Guarded by m.mu.
	closed      bool
	partitioned bool
}

var _ Store = (*MemoryClient)(nil)

// checkLocked returns the error an operation of c fails with now, after
// expiring what is due.
func (c *MemoryClient) checkLocked() error {
	c.m.expireLocked()
	if c.closed {
		return ErrClosed
	}
	if c.partitioned {
		return ErrUnavailable
	}
	return nil
}

// SetPartitioned cuts c off the store (true) or reconnects it (false),
// for fault tests: while cut, operations fail with ErrUnavailable, watches
// wait, and c's leases run towards expiry as an etcd client's do when its
// keepalives cannot get through. On reconnection the leases that are still
// there are kept alive again.
func (c *MemoryClient) SetPartitioned(p bool) {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expireLocked()
	c.partitioned = p
	if p {
		m.startDeadlinesLocked(c)
	} else if !c.closed {
		for _, l := range m.leases {
			if l.owner == c && !l.granted {
				l.deadline = time.Time{}
			}
		}
	}
	m.notifyLocked()
}

// Get implements Reader.
func (c *MemoryClient) Get(ctx context.Context, key string) (Row, int64, error) {
	if err := ctx.Err(); err != nil {
		return Row{}, 0, err
	}
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := c.checkLocked(); err != nil {
		return Row{}, 0, err
	}
	return m.rowLocked(key), m.rev, nil
}

// List implements Reader.
func (c *MemoryClient) List(ctx context.Context, prefix string) ([]Row, int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := c.checkLocked(); err != nil {
		return nil, 0, err
	}
	return m.listLocked(prefix), m.rev, nil
}

// Txn implements Writer.
func (c *MemoryClient) Txn(ctx context.Context, conds []Cond, ops []Op) (TxnResult, error) {
	if err := ctx.Err(); err != nil {
		return TxnResult{}, err
	}
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := c.checkLocked(); err != nil {
		return TxnResult{}, err
	}
	return m.txnLocked(conds, ops)
}

// NewSession implements Sessions.
func (c *MemoryClient) NewSession(ctx context.Context, ttlSeconds int) (Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if ttlSeconds <= 0 {
		return nil, fmt.Errorf("store: session ttl %ds: must be positive", ttlSeconds)
	}
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := c.checkLocked(); err != nil {
		return nil, err
	}
	m.lastID++
	s := &memSession{c: c, id: m.lastID, done: make(chan struct{})}
	m.leases[s.id] = &memLease{id: s.id, ttl: time.Duration(ttlSeconds) * time.Second, owner: c, session: s}
	return s, nil
}

// GrantLease implements Leases: the lease's deadline is ttl after now on
// the injected clock, whatever happens to c.
func (c *MemoryClient) GrantLease(ctx context.Context, ttlSeconds int) (LeaseID, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if ttlSeconds <= 0 {
		return 0, fmt.Errorf("store: lease ttl %ds: must be positive", ttlSeconds)
	}
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := c.checkLocked(); err != nil {
		return 0, err
	}
	m.lastID++
	ttl := time.Duration(ttlSeconds) * time.Second
	m.leases[m.lastID] = &memLease{id: m.lastID, ttl: ttl, owner: c, deadline: m.now().Add(ttl), granted: true}
	return m.lastID, nil
}

// Campaign implements Elections with the same key layout and rule as
// etcd's concurrency package: the candidate created first leads.
func (c *MemoryClient) Campaign(ctx context.Context, sess Session, name, value string) (Leadership, error) {
	return campaign(ctx, c, sess, name, value)
}

// Close implements Store. The client's leases are not revoked: they
// expire ttl later, as when an etcd client's process exits.
func (c *MemoryClient) Close() error {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	m.startDeadlinesLocked(c)
	for _, l := range m.leases {
		if l.owner == c && l.session != nil {
			l.session.endLocked()
		}
	}
	m.notifyLocked()
	return nil
}

type memSession struct {
	c    *MemoryClient
	id   LeaseID
	done chan struct{}
	// ended is guarded by c.m.mu.
	ended bool
}

func (s *memSession) Lease() LeaseID        { return s.id }
func (s *memSession) Done() <-chan struct{} { return s.done }

func (s *memSession) endLocked() {
	if !s.ended {
		s.ended = true
		close(s.done)
	}
}

func (s *memSession) Close() error {
	m := s.c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := s.c.checkLocked(); err != nil {
		s.endLocked()
		return nil // the lease runs out on its own
	}
	m.revokeLocked(s.id)
	s.endLocked()
	return nil
}
