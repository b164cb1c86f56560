//go:build !linux

package driver

import "time"

// pacer falls back to the runtime's sleep, with its granularity, where
// there is no timerfd.
type pacer struct{}

func newPacer() *pacer { return nil }

func (p *pacer) sleep(d time.Duration) { time.Sleep(d) }

func (p *pacer) close() {}
