// Package testdeadline gives tests their timeouts from the test binary's
// own deadline (go test -timeout) instead of fixed wall-clock limits, so a
// test that waits for a browser, a server or a Kafka client holds on a
// loaded machine: it waits as long as the run allows, and still fails with
// its own message (cleanups run) before the binary's timeout panics.
package testdeadline

import (
	"context"
	"testing"
	"time"
)

// NoDeadline is what [Remaining] returns under -timeout 0.
const NoDeadline = time.Hour

// margin is the time kept before the binary's deadline: a twentieth of
// what is left, between one and thirty seconds.
func margin(left time.Duration) time.Duration {
	return min(max(left/20, time.Second), 30*time.Second)
}

// Deadline returns when a wait in t should give up: shortly before the
// test binary's deadline, or NoDeadline from now when there is none.
func Deadline(t testing.TB) time.Time {
	d, ok := t.(interface{ Deadline() (time.Time, bool) })
	if !ok {
		return time.Now().Add(NoDeadline)
	}
	end, ok := d.Deadline()
	if !ok {
		return time.Now().Add(NoDeadline)
	}
	return end.Add(-margin(time.Until(end)))
}

// Remaining returns the time until [Deadline] (at least a millisecond), for
// waits such as time.After in a cleanup, where t.Context is already done.
func Remaining(t testing.TB) time.Duration {
	return max(time.Until(Deadline(t)), time.Millisecond)
}

// Context returns a context that is done at [Deadline] or when the test
// ends (t.Context), whichever is first.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithDeadline(t.Context(), Deadline(t))
	t.Cleanup(cancel)
	return ctx
}

// From returns parent bounded by [Deadline], for contexts that must
// outlive t.Context (a browser or server stopped in a cleanup).
func From(t testing.TB, parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithDeadline(parent, Deadline(t))
}
