package await

import (
	"testing"
	"time"
)

// TestEventually: a condition that comes true is seen; one that never does
// is reported false once the timeout has passed.
func TestEventually(t *testing.T) {
	n := 0
	if !Eventually(time.Minute, func() bool { n++; return n == 3 }) || n != 3 {
		t.Errorf("a condition true on the third poll: seen after %d polls", n)
	}
	if Eventually(20*time.Millisecond, func() bool { return false }) {
		t.Error("control: a condition never true was reported")
	}
}
