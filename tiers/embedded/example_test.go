package embedded_test

import (
	"fmt"

	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/embedded"
)

// An Op is reused across requests: Do fills its Result (appending the value
// into the Result's own buffer) and calls Done before returning.
func Example() {
	now := int64(1_700_000_000)
	store, err := embedded.New(embedded.Config{MaxBytes: 64 << 20, Now: func() int64 { return now }})
	if err != nil {
		panic(err)
	}
	op := &tiers.Op{}
	op.Done = func(op *tiers.Op) {
		fmt.Println(op.Res.Status, string(op.Res.Value), op.Res.TTL)
	}

	op.Req = tiers.Request{Kind: tiers.KindSet, Key: []byte("greeting"), Value: []byte("hello"), TTL: 300}
	store.Do(op)
	now += 100
	op.Req = tiers.Request{Kind: tiers.KindGet, Key: []byte("greeting"), WantValue: true, WantTTL: true}
	store.Do(op)
	op.Req = tiers.Request{Kind: tiers.KindArith, Mode: tiers.ModeIncr, Key: []byte("visits"), Delta: 1, Vivify: true, Initial: 41}
	store.Do(op)
	store.Do(op)
	// Output:
	// stored  300
	// hit hello 200
	// stored 41 -1
	// stored 42 -1
}
