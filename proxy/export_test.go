package proxy

// ParkedIsEmpty reports whether the work every parked connection shares
// still reads as nothing in flight: nothing may ever write to it.
func ParkedIsEmpty() bool {
	w := &parked
	return w.parser == nil && w.queue == nil && w.qbuf == nil && w.out == nil && w.keys == 0 &&
		w.inPhase == [numPhases]int32{} && w.inflight == nil && w.held == nil
}
