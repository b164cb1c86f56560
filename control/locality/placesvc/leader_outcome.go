package placesvc

import (
	"context"
	"errors"
	"time"

	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/placement"
)

// The outcome of a manual request (outcomes/<name>, locsvc.Outcome) is
// what makes a 202 to POST …/migrate answerable later: the leader may
// run in another strata than the one that took the call, so it writes,
// fenced on its leadership, what it did with the request — refused,
// waiting (return_wait, with when it decides again) or started (in the
// Migrate transaction itself). The admin view deletes the row when it
// records a new request. A rate-limited request writes nothing: it is
// decided again at the next round.

// refusal is the outcome of a manual request that ev (a refusal) did not
// start, decided at now on a row at epoch.
func refusal(ev Event, epoch uint64, now time.Time) locsvc.Outcome {
	o := locsvc.Outcome{To: ev.To, Result: locsvc.Refused, Reason: ev.Reason, At: now, Epoch: epoch}
	if !ev.Until.IsZero() {
		o.Result, o.Until = locsvc.Waiting, ev.Until
	}
	return o
}

// manualDeclined is the reason a manual request, taken as a pin, was
// not carried out by placement.Decide.
func manualDeclined(r placement.Reason) string {
	if r == placement.ReasonPinned {
		return "already_owner"
	}
	return r.String()
}

// writeOutcome records o for name, fenced; called without mu. Only a
// lost leadership is an error for the round: the outcome of any other
// failed write is logged, not retried (the request itself is decided).
func (ld *Leader) writeOutcome(ctx context.Context, name string, o locsvc.Outcome) error {
	_, err := store.FencedTxn(ctx, ld.st, ld.l, nil, []store.Op{store.Put(ld.layout.OutcomeKey(name), locsvc.EncodeOutcome(o))})
	if errors.Is(err, store.ErrFenced) {
		return err
	}
	if err != nil {
		ld.cfg.Logger.Warn("locality move outcome", "mushard", name, "err", err)
	}
	return nil
}
