package loccache

import "github.com/strata-cache/strata/tiers/locality/keyrule"

// Peek returns id's cached location like Get, but counts nothing and
// leaves the reference bit alone: for the router's own bookkeeping
// (reading back the view a Put kept), not for a request's lookup.
func (c *Cache) Peek(h uint64, id keyrule.ID) (Location, bool) {
	i := c.lookup(h, id)
	if i < 0 {
		return Location{}, false
	}
	return c.slots[i].loc, true
}

// Refresh applies a row change the location service saw to id's entry,
// only if id is cached: the watch keeps cached views current and never
// fills the cache (demand fills it). A newer view replaces the entry (an
// older one is ignored, as by Put); a deleted row drops it. It reports
// whether the entry changed.
func (c *Cache) Refresh(h uint64, id keyrule.ID, loc Location, deleted bool) bool {
	i := c.lookup(h, id)
	if i < 0 {
		return false
	}
	if deleted {
		c.drop(i)
		c.invalidations.Add(1)
		return true
	}
	s := &c.slots[i]
	if loc.Before(s.loc) || loc == s.loc {
		return false
	}
	s.loc = loc
	return true
}
