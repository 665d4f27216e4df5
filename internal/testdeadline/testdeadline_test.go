package testdeadline

import (
	"testing"
	"time"
)

func TestMargin(t *testing.T) {
	for _, c := range []struct{ left, want time.Duration }{
		{10 * time.Minute, 30 * time.Second},
		{5 * time.Minute, 15 * time.Second},
		{10 * time.Second, time.Second},
	} {
		if got := margin(c.left); got != c.want {
			t.Errorf("margin(%v) = %v, want %v", c.left, got, c.want)
		}
	}
}

// TestDeadlineFollowsTheTest: the context ends before the binary's
// deadline, not after a fixed time; without a deadline it is an hour out.
func TestDeadlineFollowsTheTest(t *testing.T) {
	ctx := Context(t)
	got, ok := ctx.Deadline()
	if !ok {
		t.Fatal("context has no deadline")
	}
	if end, ok := t.Deadline(); ok {
		if !got.Before(end) || end.Sub(got) > 30*time.Second+time.Second {
			t.Errorf("context ends at %v, the test at %v", got, end)
		}
	} else if time.Until(got) < NoDeadline-time.Minute {
		t.Errorf("without -timeout the context ends in %v", time.Until(got))
	}
	if Remaining(t) <= 0 {
		t.Errorf("Remaining = %v", Remaining(t))
	}
}
