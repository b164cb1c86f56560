package placesvc_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/control/locality/internal/harness"
	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/locality/placesvc"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/internal/poll"
)

// TestAdminEndpoints: the contract's four paths, served by a real admin
// server over a View of either store, with a placement service and a
// location service running: read a μ-shard, move it by hand, pin it
// (a manual move against the pin is refused), list the moves, and the
// 4xx answers to bad input.
func TestAdminEndpoints(t *testing.T) { each(t, testAdminEndpoints) }

func testAdminEndpoints(t *testing.T, env harness.Env) {
	ctx := ctxT(t)
	r, rc, _ := runner(t, env, "p1", 50*time.Millisecond)
	m := member(t, env, "a", "ma")
	poll.Until(t, harness.Wait, "p1 leads", func() bool { return r.Leading() != nil })
	const id = "u: a/b" // a name with a space and a slash: escaped in the path
	if _, err := harness.Resolve(t, m, id, false); err != nil {
		t.Fatal(err)
	}
	view := placesvc.NewView(rc, "", []string{"a", "b", "c"}, r, nil)
	srv, err := admin.New(admin.Config{Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)}, admin.Deps{Locality: view})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	cl := admin.NewClient(srv.Addr(), "", 10*time.Second)

	ms, err := cl.MuShard(ctx, id)
	if err != nil || ms.ID != id || ms.Owner != "a" || ms.Epoch != 1 || ms.State != "stable" || len(ms.History) != 1 || ms.History[0].Reason != "created" {
		t.Fatalf("get: %+v %v", ms, err)
	}
	// Bad input: 404 for an unknown μ-shard, 400 naming the field for an
	// unknown region.
	for _, c := range []struct {
		err   error
		code  int
		field string
	}{
		{second(cl.MuShard(ctx, "u: none")), 404, "id"},
		{second(cl.MigrateMuShard(ctx, "u: none", "b")), 404, "id"},
		{second(cl.MigrateMuShard(ctx, id, "mars")), 400, "to"},
		{second(cl.MigrateMuShard(ctx, id, "")), 400, "to"},
		{second(cl.PinMuShard(ctx, id, "mars")), 400, "region"},
		{second(cl.PinMuShard(ctx, "u: none", "b")), 404, "id"},
	} {
		var ae *admin.APIError
		if !errors.As(c.err, &ae) || ae.Code != c.code || ae.Field != c.field {
			t.Errorf("%v: want %d on field %q", c.err, c.code, c.field)
		}
	}

	ms, err = cl.MigrateMuShard(ctx, id, "b")
	if err != nil || ms.Requested != "b" {
		t.Fatalf("migrate: %+v %v", ms, err)
	}
	poll.Until(t, harness.Wait, "the manual move", func() bool {
		env.Elapse(t, 10*time.Millisecond)
		ms, err := cl.MuShard(ctx, id)
		return err == nil && ms.Owner == "b" && ms.State == "stable"
	})
	ms, _ = cl.MuShard(ctx, id)
	if ms.Epoch != 2 || len(ms.History) != 2 || ms.History[1].From != "a" || ms.History[1].Reason != "manual" {
		t.Fatalf("after the move: %+v", ms)
	}

	// A pin to c moves it there; a manual move to a is then refused, and
	// says so (in the μ-shard and the list, while it is at that epoch).
	if ms, err = cl.PinMuShard(ctx, id, "c"); err != nil || ms.Pin != "c" {
		t.Fatalf("pin: %+v %v", ms, err)
	}
	poll.Until(t, harness.Wait, "the pinned move", func() bool {
		env.Elapse(t, 10*time.Millisecond)
		ms, err := cl.MuShard(ctx, id)
		return err == nil && ms.Owner == "c" && ms.State == "stable"
	})
	if _, err := cl.MigrateMuShard(ctx, id, "a"); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, harness.Wait, "the refusal", func() bool {
		ms, err = cl.MuShard(ctx, id)
		return err == nil && ms.LastRequest != nil
	})
	if lr := ms.LastRequest; ms.Owner != "c" || ms.Epoch != 3 || lr.To != "a" || lr.Outcome != "refused" || lr.Reason != "pinned to c" || lr.Epoch != 3 || lr.Until != nil {
		t.Fatalf("a manual move against the pin: %+v, %+v", ms, lr)
	}
	if ms, err = cl.PinMuShard(ctx, id, ""); err != nil || ms.Pin != "" {
		t.Fatalf("unpin: %+v %v", ms, err)
	}
	refusal := admin.Migration{ID: id, From: "c", To: "a", Epoch: 3, State: "stable", Since: ms.LastRequest.At, Outcome: "refused", Reason: "pinned to c"}
	if list, err := cl.LocalityMigrations(ctx); err != nil || len(list) != 1 || list[0] != refusal {
		t.Fatalf("migrations when none is in flight: %+v %v", list, err)
	}

	// A member that applied nothing holds a move in Prepare: it is listed.
	if _, err := harness.Resolve(t, m, "u: 2", false); err != nil {
		t.Fatal(err)
	}
	sess, err := rc.NewSession(ctx, 30)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rc.Txn(ctx, nil, []store.Op{store.PutLease(locsvc.NewLayout("").AckKey("slow"), []byte("0"), sess.Lease())}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.MigrateMuShard(ctx, "u: 2", "b"); err != nil {
		t.Fatal(err)
	}
	var list []admin.Migration
	poll.Until(t, harness.Wait, "the move listed", func() bool {
		list, err = cl.LocalityMigrations(ctx)
		return err == nil && len(list) == 2
	})
	if g := list[0]; g.ID != "u: 2" || g.From != "a" || g.To != "b" || g.Epoch != 2 || g.State != "prepare" || g.Outcome != "" || list[1] != refusal {
		t.Fatalf("migrations: %+v", list)
	}
	_ = sess.Close()
}

func second[T any](_ T, err error) error { return err }
