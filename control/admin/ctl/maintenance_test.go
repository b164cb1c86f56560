package ctl

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/admin"
)

// walkServer plays the admin server's side of a walk: each read of the
// status shows one more note, the walk ending after the last (with err,
// if any); an unfinished walk can be cancelled.
type walkServer struct {
	lines     []string
	err       string
	sent      []admin.MaintenanceRequest
	reads     int
	cancelled bool
	stuck     bool // never ends
	// hang: a status read waits until its context ends and fails with
	// it, as a request cut by --wait does.
	hang bool
}

func (w *walkServer) status() admin.MaintenanceStatus {
	st := admin.MaintenanceStatus{Tier: "l2", Addr: "b:1", Step: "emptying", Running: true}
	for i := 0; i < min(w.reads, len(w.lines)); i++ {
		st.Notes = append(st.Notes, admin.MaintenanceNote{Seq: i + 1, Line: w.lines[i]})
	}
	if w.reads >= len(w.lines) && !w.stuck {
		st.Running, st.Error, st.Step = false, w.err, "done"
	}
	w.reads++
	return st
}

func (w *walkServer) StartMaintenance(_ context.Context, req admin.MaintenanceRequest) (admin.MaintenanceStatus, error) {
	w.sent = append(w.sent, req)
	return w.status(), nil
}

func (w *walkServer) Maintenance(ctx context.Context) (admin.MaintenanceStatus, error) {
	if w.hang {
		<-ctx.Done()
		return admin.MaintenanceStatus{}, ctx.Err()
	}
	return w.status(), nil
}

func (w *walkServer) CancelMaintenance(context.Context) (admin.MaintenanceStatus, error) {
	w.cancelled = true
	return admin.MaintenanceStatus{}, nil
}

func TestMaintenanceFollowsTheWalk(t *testing.T) {
	w := &walkServer{lines: []string{"b:1: draining (50 shards)", "b:1: holds nothing; restart it now", "b:1: up with 50 shards; done"}}
	var out strings.Builder
	if err := runMaintenance(context.Background(), w, []string{"--interval", "1ms", "l2", "b:1"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if len(w.sent) != 1 || w.sent[0] != (admin.MaintenanceRequest{Tier: "l2", Addr: "b:1", Interval: admin.Duration(time.Millisecond)}) {
		t.Fatalf("requests %+v", w.sent)
	}
	for _, want := range w.lines {
		if strings.Count(out.String(), want) != 1 {
			t.Errorf("output does not show %q once:\n%s", want, out.String())
		}
	}
	w = &walkServer{lines: []string{"server 1 of 2"}, err: "b:1: maintenance not finished"}
	if err := runMaintenance(context.Background(), w, []string{"--all", "--interval", "1ms", "l2"}, io.Discard, io.Discard); err == nil || err.Error() != w.err {
		t.Errorf("a walk that failed: %v", err)
	}
	if !w.sent[0].All || w.sent[0].Addr != "" {
		t.Errorf("--all sent %+v", w.sent[0])
	}
}

func TestMaintenanceRefuses(t *testing.T) {
	w := &walkServer{}
	for _, args := range [][]string{{"l2"}, {"--all", "l2", "b:1"}, {"l2", "b:1", "c:1"}} {
		if err := runMaintenance(context.Background(), w, args, io.Discard, io.Discard); !errors.Is(err, ErrUsage) {
			t.Errorf("%q: %v", args, err)
		}
	}
	if len(w.sent) != 0 {
		t.Errorf("a usage error reached the server: %+v", w.sent)
	}
	w = &walkServer{stuck: true}
	err := runMaintenance(context.Background(), w, []string{"--interval", "1ms", "--wait", "20ms", "l2", "b:1"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "emptying") || !w.cancelled {
		t.Errorf("a walk past --wait: %v, cancelled %v", err, w.cancelled)
	}
	// --wait ending during a status read is the same: not a success.
	w = &walkServer{stuck: true, hang: true}
	err = runMaintenance(context.Background(), w, []string{"--interval", "1ms", "--wait", "20ms", "l2", "b:1"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "emptying") || !w.cancelled {
		t.Errorf("a walk past --wait during a read: %v, cancelled %v", err, w.cancelled)
	}
}
