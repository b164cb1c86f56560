package embedded

import (
	"runtime/debug"
	"sync"
)

// A load allocates only what the store keeps (and one read buffer), so a
// collection during it finds almost no garbage, yet marks the whole store:
// over 1 GiB of 100-byte items that is about a second of CPU, on a machine
// whose other core the load would use. relaxCollector turns proportional
// collection off for the duration; the memory limit (MemoryLimit) still
// starts a collection if the heap nears it, so the process stays bounded.
// A save is not relaxed: turning collection off waits for a collection
// under way to finish, and at shutdown one often is (measured: the save
// after a fill took 0.4 s longer).
//
// Invariant: while relaxed.n > 0 the GC percent is off and relaxed.percent
// holds the setting to restore; stores loading at once share one
// relaxation, restored when the last of them ends.
var relaxed struct {
	sync.Mutex
	n       int
	percent int
}

// relaxCollector turns proportional collection off until the returned
// func is called.
func relaxCollector() (restore func()) {
	relaxed.Lock()
	if relaxed.n == 0 {
		relaxed.percent = debug.SetGCPercent(-1)
	}
	relaxed.n++
	relaxed.Unlock()
	return func() {
		relaxed.Lock()
		relaxed.n--
		if relaxed.n == 0 {
			debug.SetGCPercent(relaxed.percent)
		}
		relaxed.Unlock()
	}
}
