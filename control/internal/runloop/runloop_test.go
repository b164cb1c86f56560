package runloop

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestStopCancelsAndWaits(t *testing.T) {
	l := New()
	release := make(chan struct{})
	returned := false
	l.Start(func(ctx context.Context) {
		<-ctx.Done()
		<-release // the function still runs after its context ended
		returned = true
	})
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := l.Stop(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop returned %v before the function did", err)
	}
	close(release)
	if err := l.Stop(context.Background()); err != nil || !returned {
		t.Fatalf("second Stop: %v, function returned: %v", err, returned)
	}
}

func TestStopWithoutStart(t *testing.T) {
	l := New()
	if err := l.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := l.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}
