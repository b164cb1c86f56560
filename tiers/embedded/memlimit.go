package embedded

// The embedded stores allocate every item on the Go heap. Left to GOGC
// alone, the runtime lets the heap grow to about twice what is live before
// it collects, and keeps freed pages mapped for a while: 1 GiB + 64 MiB of
// embedded tiers filled with 100 KB values sat at 1.9–2.6 GB of RSS. A
// memory limit derived from the stores' sizes makes the collector run (and
// return pages to the OS) as the process nears it instead.

const (
	// memoryBaseline is what strata needs besides the items: the runtime,
	// goroutine stacks, connection and backend buffers, the sampler's
	// rings and the GC's working room. Idle, strata's RSS is about 14 MiB,
	// some of it the binary's text, which the Go limit does not count.
	memoryBaseline = 32 << 20
	// sizeClassSlack is the share of the stores' budget added for the Go
	// allocator's rounding of each item's buffer to its size class (at
	// most 1/8 up to 32 KiB; a large object is rounded to 8 KiB pages,
	// 6.5 % for a 100 KB value). A store charges the bytes asked for, not
	// the bytes allocated.
	sizeClassSlack = 8 // 1/8
)

// MemoryLimit is the Go runtime's memory limit (debug.SetMemoryLimit) for a
// process whose embedded stores hold up to maxBytes in all: the budget,
// 1/8 on top for size classes, and a baseline for the rest of the
// process. It is 0 when maxBytes is 0: the process holds no items and the
// runtime's default (no limit) should stand.
func MemoryLimit(maxBytes int64) int64 {
	if maxBytes <= 0 {
		return 0
	}
	return maxBytes + maxBytes/sizeClassSlack + memoryBaseline
}
