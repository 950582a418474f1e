// Package await polls for a condition that offers no event to wait on (a
// process gone, a file another process writes, a pid in a file). Tests wait
// with it instead of sleeping a fixed time: a quick condition is seen
// quickly, a slow one costs little, and a timeout names what never came.
// testkit/testbed's Await and Eventually are this; packages testbed itself
// imports (internal/child) use it directly.
package await

import (
	"testing"
	"time"
)

// Eventually reports whether cond held within timeout. It polls at once,
// then at intervals that double from 5 ms to 200 ms.
func Eventually(timeout time.Duration, cond func() bool) bool {
	end := time.Now().Add(timeout)
	for wait := 5 * time.Millisecond; !cond(); wait = min(2*wait, 200*time.Millisecond) {
		if time.Now().After(end) {
			return false
		}
		timer := time.NewTimer(wait)
		<-timer.C
	}
	return true
}

// True fails t (naming what it awaited) when cond does not hold within
// timeout.
func True(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Eventually(timeout, cond) {
		t.Fatalf("%s did not happen within %s", what, timeout)
	}
}
