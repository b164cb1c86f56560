//go:build !linux

package tickgrid

import (
	"errors"
	"time"
)

// pollTimer has no implementation here: sleepers use a runtime timer.
type pollTimer struct{}

func newPollTimer() (*pollTimer, error) {
	return nil, errors.New("tickgrid: no timer descriptor on this platform")
}

func (*pollTimer) wait(time.Duration) error { return errors.New("tickgrid: no timer descriptor") }

func (*pollTimer) once(time.Duration) error { return errors.New("tickgrid: no timer descriptor") }

func (*pollTimer) close() {}
