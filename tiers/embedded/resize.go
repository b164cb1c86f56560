package embedded

import "fmt"

// SetMaxBytes changes the store's memory bound while it serves, as
// memcached's cache_memlimit does: each shard's budget becomes n/Shards,
// and a shard over its new budget evicts from its LRU tail (dead items
// first) down to it before the call returns, so a shrink frees memory at
// once. The number of shards stays what New chose, so a bound whose
// share per shard is below the largest item makes the larger items fail
// as memcached's do when memory cannot be found ("out of memory storing
// object"), until the bound is raised again. A share below the smallest
// item is refused.
func (s *Store) SetMaxBytes(n int64) error {
	budget := n / int64(len(s.shards))
	if need := int64(minItemSize) + ItemOverhead; budget < need {
		return fmt.Errorf("embedded: %d bytes over %d shards leave each less than the smallest item (%d bytes, plus %d of overhead)",
			n, len(s.shards), minItemSize, ItemOverhead)
	}
	now, fl := s.now(), s.flush.Load()
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		sh.budget = budget
		sh.makeRoomLocked(0, now, fl)
		sh.mu.Unlock()
	}
	s.maxBytes.Store(n)
	return nil
}
