package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strata-cache/strata/control/store"
)

// Config is how to reach etcd.
type Config struct {
	// Endpoints are the etcd client addresses, host:port. Required.
	Endpoints []string
	// Prefix is put before every key, so that several strata fleets (or
	// other users) share one etcd. Default "strata/"; it must end in "/".
	Prefix string
	// DialTimeout bounds New's first connection. Default 5s.
	DialTimeout time.Duration
	// KeepAlive is the interval of gRPC pings that find a dead or hung
	// server; a ping unanswered for another KeepAlive drops the connection
	// and redials. Default 2s.
	KeepAlive time.Duration
	// MaxBackoff caps the delay between redials, so that the control plane
	// is back within about this long after etcd is. Default 1s.
	MaxBackoff time.Duration
	// ListPage is how many rows one range read of List returns at most.
	// Default 50000 (about 4.5 MB of location rows): a table of a million
	// rows read in one response costs etcd and the client a 90 MB buffer
	// each and holds up every request behind it. Pages are not free: etcd
	// counts every key left in the range for each page (its response
	// carries the total), so a list costs about rows × pages / 2 index
	// steps; at 5,000 rows a page a million rows took 47 s to list.
	ListPage int
}

func (c *Config) validate() error {
	if len(c.Endpoints) == 0 {
		return errors.New("etcdstore: no endpoints")
	}
	for _, e := range c.Endpoints {
		if strings.TrimSpace(e) == "" {
			return errors.New("etcdstore: empty endpoint")
		}
	}
	if c.Prefix == "" {
		c.Prefix = "strata/"
	}
	if !strings.HasSuffix(c.Prefix, "/") {
		return fmt.Errorf("etcdstore: prefix %q must end in /", c.Prefix)
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = 5 * time.Second
	}
	if c.KeepAlive <= 0 {
		c.KeepAlive = 2 * time.Second
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = time.Second
	}
	if c.ListPage <= 0 {
		c.ListPage = 50000
	}
	return nil
}

// Store is one client of an etcd cluster. It implements store.Store.
type Store struct {
	c *clientv3.Client
	// sc is c with gridLease for KeepAlive: the client sessions and their
	// elections run on (see gridLease). It ends with c.
	sc     *clientv3.Client
	lease  *gridLease
	prefix string
	page   int64 // Config.ListPage

	closeOnce sync.Once
}

var _ store.Store = (*Store)(nil)

// New connects to etcd. It fails if no endpoint answers within
// DialTimeout.
func New(cfg Config) (*Store, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	bo := backoff.DefaultConfig
	bo.MaxDelay = cfg.MaxBackoff
	c, err := clientv3.New(clientv3.Config{
		Endpoints:            cfg.Endpoints,
		DialTimeout:          cfg.DialTimeout,
		DialKeepAliveTime:    cfg.KeepAlive,
		DialKeepAliveTimeout: cfg.KeepAlive,
		Logger:               zap.NewNop(),
		DialOptions: []grpc.DialOption{
			grpc.WithConnectParams(grpc.ConnectParams{Backoff: bo, MinConnectTimeout: cfg.DialTimeout}),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("etcdstore: connect %v: %w", cfg.Endpoints, err)
	}
	s := &Store{c: c, prefix: cfg.Prefix, page: int64(cfg.ListPage)}
	s.lease = newGridLease(c)
	s.sc = clientv3.NewCtxClient(c.Ctx())
	s.sc.Cluster, s.sc.KV, s.sc.Watcher, s.sc.Auth, s.sc.Maintenance = c.Cluster, c.KV, c.Watcher, c.Auth, c.Maintenance
	s.sc.Lease = s.lease
	return s, nil
}

// Client is the underlying etcd client, for operations the store does not
// cover (status, compaction).
func (s *Store) Client() *clientv3.Client { return s.c }

// Close ends the client. Sessions are not revoked: their leases expire on
// their own, as when the process dies. Idempotent.
func (s *Store) Close() error {
	var err error
	s.closeOnce.Do(func() { err = s.c.Close() })
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

func (s *Store) key(k string) string { return s.prefix + k }

func (s *Store) row(kv *mvccpb.KeyValue) store.Row {
	return store.Row{
		Key:            strings.TrimPrefix(string(kv.Key), s.prefix),
		Value:          kv.Value,
		CreateRevision: kv.CreateRevision,
		ModRevision:    kv.ModRevision,
		Version:        kv.Version,
		Lease:          store.LeaseID(kv.Lease),
	}
}

// wrap turns client errors into the store's: ErrClosed once the client
// is closed, ErrUnavailable (wrapped, with the cause) when the server
// cannot be reached; context errors pass through.
func (s *Store) wrap(err error) error {
	if err == nil {
		return nil
	}
	if s.c.Ctx().Err() != nil {
		return store.ErrClosed
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if st, ok := status.FromError(err); ok {
		switch st.Code() {
		case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
			return fmt.Errorf("%w: %v", store.ErrUnavailable, err)
		}
	}
	return err
}

// Get implements store.Reader.
func (s *Store) Get(ctx context.Context, key string) (store.Row, int64, error) {
	resp, err := s.c.Get(ctx, s.key(key))
	if err != nil {
		return store.Row{}, 0, s.wrap(err)
	}
	if len(resp.Kvs) == 0 {
		return store.Row{Key: key}, resp.Header.Revision, nil
	}
	return s.row(resp.Kvs[0]), resp.Header.Revision, nil
}

// List implements store.Reader. It reads in pages of Config.ListPage
// rows, every page at the first page's revision, so the rows are one
// snapshot as a single range read would give. A compaction past that
// revision between two pages fails the later page; List then starts
// over at the newest revision, a bounded number of times.
func (s *Store) List(ctx context.Context, prefix string) ([]store.Row, int64, error) {
	var err error
	for range listAttempts {
		var rows []store.Row
		var rev int64
		if rows, rev, err = s.list(ctx, prefix); !errors.Is(err, rpctypes.ErrCompacted) {
			return rows, rev, err
		}
	}
	return nil, 0, s.wrap(err)
}

// listAttempts bounds List's restarts after a compaction overtook it.
const listAttempts = 3

func (s *Store) list(ctx context.Context, prefix string) ([]store.Row, int64, error) {
	from, end := s.key(prefix), clientv3.GetPrefixRangeEnd(s.key(prefix))
	var rows []store.Row
	var rev int64
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(s.page)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := s.c.Get(ctx, from, opts...)
		if err != nil {
			if errors.Is(err, rpctypes.ErrCompacted) {
				return nil, 0, err
			}
			return nil, 0, s.wrap(err)
		}
		if rev == 0 {
			rev = resp.Header.Revision
			rows = make([]store.Row, 0, resp.Count)
		}
		for _, kv := range resp.Kvs {
			rows = append(rows, s.row(kv))
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return rows, rev, nil
		}
		// The next page starts just after this one's last key.
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// Txn implements store.Writer as one etcd transaction whose else branch
// reads the conditions' keys, so a failure reports what it lost to.
func (s *Store) Txn(ctx context.Context, conds []store.Cond, ops []store.Op) (store.TxnResult, error) {
	cmps := make([]clientv3.Cmp, len(conds))
	reads := make([]clientv3.Op, len(conds))
	for i, c := range conds {
		k := s.key(c.Key)
		switch c.Field() {
		case store.CondModRevision:
			cmps[i] = clientv3.Compare(clientv3.ModRevision(k), "=", c.Value())
		case store.CondCreateRevision:
			cmps[i] = clientv3.Compare(clientv3.CreateRevision(k), "=", c.Value())
		case store.CondVersion:
			cmps[i] = clientv3.Compare(clientv3.Version(k), "=", c.Value())
		default:
			return store.TxnResult{}, fmt.Errorf("etcdstore: condition %v: unknown field", c)
		}
		reads[i] = clientv3.OpGet(k)
	}
	then := make([]clientv3.Op, len(ops))
	for i, op := range ops {
		k := s.key(op.Key)
		switch {
		case op.Delete && op.Prefix:
			then[i] = clientv3.OpDelete(k, clientv3.WithPrefix())
		case op.Delete:
			then[i] = clientv3.OpDelete(k)
		case op.Lease != 0:
			then[i] = clientv3.OpPut(k, string(op.Value), clientv3.WithLease(clientv3.LeaseID(op.Lease)))
		default:
			then[i] = clientv3.OpPut(k, string(op.Value))
		}
	}
	resp, err := s.c.Txn(ctx).If(cmps...).Then(then...).Else(reads...).Commit()
	if err != nil {
		return store.TxnResult{}, s.wrap(err)
	}
	res := store.TxnResult{Succeeded: resp.Succeeded, Revision: resp.Header.Revision}
	if !resp.Succeeded {
		res.Current = make([]store.Row, len(conds))
		for i, r := range resp.Responses {
			res.Current[i] = store.Row{Key: conds[i].Key}
			if kvs := r.GetResponseRange().GetKvs(); len(kvs) > 0 {
				res.Current[i] = s.row(kvs[0])
			}
		}
	}
	return res, nil
}
