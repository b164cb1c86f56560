package admin

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

// TestClient drives every typed call against a real admin server and
// checks what the server's state became and how refusals come back.
func TestClient(t *testing.T) {
	st := newState()
	s := startServer(t, Config{Token: "tok"}, st)
	ctx := context.Background()
	c := NewClient(s.Addr(), "tok", 5*time.Second)

	p, err := c.Promotion(ctx)
	if err != nil || p.Threshold != 32 || time.Duration(p.L1MaxTTL) != time.Minute {
		t.Fatalf("Promotion: %+v %v", p, err)
	}
	th, ttl := int64(4), "20s"
	rules := []Rule{{Prefix: "photos:", Threshold: 64}}
	p, err = c.PatchPromotion(ctx, PromotionPatch{Threshold: &th, Rules: &rules, L1MaxTTL: &ttl})
	if err != nil || p.Threshold != 4 || len(p.Rules) != 1 || time.Duration(p.L1MaxTTL) != 20*time.Second {
		t.Fatalf("PatchPromotion: %+v %v", p, err)
	}
	// A patch of the threshold alone keeps the rules; an empty rule list
	// removes them.
	th = 9
	if p, err = c.PatchPromotion(ctx, PromotionPatch{Threshold: &th}); err != nil || len(p.Rules) != 1 || p.Threshold != 9 {
		t.Fatalf("threshold alone: %+v %v", p, err)
	}
	if p, err = c.PatchPromotion(ctx, PromotionPatch{Rules: &[]Rule{}}); err != nil || len(p.Rules) != 0 {
		t.Fatalf("no rules: %+v %v", p, err)
	}
	if got := st.Promotion(); got.Threshold != 9 || len(got.Rules) != 0 {
		t.Fatalf("server state after the patches: %+v", got)
	}

	if ss, err := c.SetSampleRate(ctx, 10); err != nil || ss.Rate != 10 {
		t.Fatalf("SetSampleRate: %+v %v", ss, err)
	}
	if ss, err := c.Sampler(ctx); err != nil || ss.Rate != 10 || ss.Records != 7 {
		t.Fatalf("Sampler: %+v %v", ss, err)
	}
	ts, err := c.Tiers(ctx)
	if err != nil || len(ts) != 2 || ts[1].Servers[0].Addr != "127.0.0.1:1" {
		t.Fatalf("Tiers: %+v %v", ts, err)
	}
	if raw, err := c.Raw(ctx, http.MethodGet, "config", nil); err != nil || len(raw) == 0 {
		t.Fatalf("Raw config: %s %v", raw, err)
	}

	// Refusals carry the status and the field the server named.
	var ae *APIError
	zero := int64(0)
	if _, err := c.PatchPromotion(ctx, PromotionPatch{Threshold: &zero}); !errors.As(err, &ae) || ae.Code != 400 || ae.Field != "threshold" {
		t.Errorf("threshold 0: %v", err)
	}
	if _, err := c.SetSampleRate(ctx, -3); !errors.As(err, &ae) || ae.Field != "rate" {
		t.Errorf("rate -3: %v", err)
	}
	if _, err := NewClient("http://"+s.Addr()+"/", "", time.Second).Promotion(ctx); !errors.As(err, &ae) || ae.Code != 401 {
		t.Errorf("without the token: %v", err)
	}
	if _, err := c.Raw(ctx, http.MethodGet, "nothing", nil); !errors.As(err, &ae) || ae.Code != 404 {
		t.Errorf("unknown path: %v", err)
	}
}
