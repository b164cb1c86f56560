package locsvc

import (
	"testing"
	"time"
)

// TestAckWait: an idle acker sleeps until kicked, or until its next
// heartbeat is due; a failure is retried after the retry wait.
func TestAckWait(t *testing.T) {
	const hb, retry = 7500 * time.Millisecond, time.Second
	for _, c := range []struct {
		name           string
		failed, joined bool
		since, want    time.Duration
	}{
		{"idle, no fence: until kicked", false, false, 0, 0},
		{"idle, no fence, long since", false, false, time.Hour, 0},
		{"write failed, not joined", true, false, 0, retry},
		{"joined, just proved", false, true, 0, hb},
		{"joined, heartbeat in 2s", false, true, hb - 2*time.Second, 2 * time.Second},
		{"joined, heartbeat due (the read failed)", false, true, hb, retry},
		{"joined, long overdue", false, true, time.Minute, retry},
		{"joined, write failed, heartbeat far", true, true, 0, retry},
		{"joined, write failed, heartbeat sooner", true, true, hb - 300*time.Millisecond, 300 * time.Millisecond},
	} {
		if got := ackWait(c.failed, c.joined, c.since, hb, retry); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
