package lazyre

import (
	"testing"
)

// The pattern compiles once, on the first call, and a bad one panics
// there rather than at start (the control: the good one matches).
func TestNew(t *testing.T) {
	re := New(`^a+$`)
	if re() != re() || !re().MatchString("aaa") || re().MatchString("b") {
		t.Fatal("want one compiled pattern that matches a+")
	}
	bad := New(`(`)
	defer func() {
		if recover() == nil {
			t.Fatal("a bad pattern did not panic on first use")
		}
	}()
	bad()
}
