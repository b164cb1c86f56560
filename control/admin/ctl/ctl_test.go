package ctl

import (
	"errors"
	"io"
	"testing"
)

// Arguments that cannot make a request are usage errors, before any
// connection is tried (the address is a closed port).
func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"get"},
		{"get", "nothing"},
		{"set", "promotion"},
		{"set", "promotion", "--rule", "a=1", "--no-rules"},
		{"set", "sampler"},
		{"shardmap"},
		{"drain", "l2"},
		{"locality"},
		{"locality", "pin", "u 1"},
		{"top", "stray"},
		{"bogus", "x"},
	} {
		err := Run(append([]string{"--admin", "127.0.0.1:1"}, args...), io.Discard, io.Discard)
		if !errors.Is(err, ErrUsage) {
			t.Errorf("Run(%q) = %v, want a usage error", args, err)
		}
	}
}

// A patch carries only the settings given, so the server keeps the rest.
func TestPromotionPatchHoldsOnlyWhatIsGiven(t *testing.T) {
	p, err := promotionPatch([]string{"--rule", "a:=4", "--rule", "b=8"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if p.Threshold != nil || p.L1MaxTTL != nil || p.Rules == nil || len(*p.Rules) != 2 || (*p.Rules)[0].Prefix != "a:" || (*p.Rules)[1].Threshold != 8 {
		t.Errorf("patch %+v", p)
	}
	p, err = promotionPatch([]string{"--no-rules", "--threshold", "3"}, io.Discard)
	if err != nil || p.Rules == nil || len(*p.Rules) != 0 || p.Threshold == nil || *p.Threshold != 3 {
		t.Errorf("patch %+v, %v", p, err)
	}
}
