package store_test

import (
	"context"
	"fmt"

	"github.com/strata-cache/strata/control/store"
)

// A shard-assignment leader publishes versioned maps; a strata applies
// them. The in-memory store stands in for etcd: the code is the same.
func Example() {
	ctx := context.Background()
	m := store.NewMemory(store.MemoryOptions{})
	leader, proxy := m.Connect(), m.Connect()
	defer leader.Close()
	defer proxy.Close()

	// The proxy follows the map before any is published.
	maps := store.WatchVersioned(proxy, "shardmap/l2", 0)
	defer maps.Close()

	// The controller's process holds a session and wins the loop's
	// election; every publication is fenced on that leadership.
	sess, _ := leader.NewSession(ctx, 10)
	lead, _ := leader.Campaign(ctx, sess, "shard-assignment", "controller-1")
	for v := uint64(1); v <= 2; v++ {
		if err := store.Publish(ctx, leader, lead, "shardmap/l2", v, []byte(fmt.Sprintf("map %d", v))); err != nil {
			fmt.Println(err)
		}
	}
	// A publication that does not follow the stored version is refused.
	fmt.Println(store.Publish(ctx, leader, lead, "shardmap/l2", 2, []byte("another map 2")))

	got, _ := maps.Next(ctx)
	fmt.Printf("applied version %d: %s\n", got.Version, got.Payload)
	// Output:
	// store: publish shardmap/l2 version 2: stored version is 2
	// applied version 2: map 2
}
