package admin

import (
	"errors"
	"testing"
	"time"

	"github.com/strata-cache/strata/tiers/promote"
)

// fakeLayering stands in for tiers/layered.Tier, refusing a TTL cap of
// zero as the layering does.
type fakeLayering struct {
	p   *promote.Policy
	ttl time.Duration
}

func (f *fakeLayering) Policy() *promote.Policy     { return f.p }
func (f *fakeLayering) SetPolicy(p *promote.Policy) { f.p = p }
func (f *fakeLayering) L1MaxTTL() time.Duration     { return f.ttl }
func (f *fakeLayering) SetL1MaxTTL(d time.Duration) error {
	if d <= 0 {
		return errors.New("out of range")
	}
	f.ttl = d
	return nil
}

func TestLayeredPromotion(t *testing.T) {
	p0, err := promote.NewPolicy(10, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeLayering{p: p0, ttl: time.Minute}
	v := LayeredPromotion{f}
	want := Promotion{Threshold: 4, Rules: []Rule{{Prefix: "a:", Threshold: 2}}, L1MaxTTL: Duration(time.Hour)}
	if err := v.SetPromotion(want); err != nil {
		t.Fatal(err)
	}
	if got := v.Promotion(); got.Threshold != 4 || len(got.Rules) != 1 || got.Rules[0] != want.Rules[0] || got.L1MaxTTL != want.L1MaxTTL {
		t.Fatalf("Promotion() = %+v, want %+v", got, want)
	}
	// A refused cap is a FieldError and leaves the policy as it was.
	err = v.SetPromotion(Promotion{Threshold: 7})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "l1_max_ttl" || f.p.Threshold() != 4 {
		t.Fatalf("SetPromotion with a zero cap: %v, threshold %d", err, f.p.Threshold())
	}
}
