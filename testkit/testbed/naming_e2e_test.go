package testbed

import "testing"

// A test in a *_e2e_test.go file may spawn claude (this one spawns nothing:
// it only asks the check), subtests included.
func TestE2EFileAccepted(t *testing.T) {
	if err := e2eFile(1); err != nil {
		t.Fatalf("e2eFile from naming_e2e_test.go = %v", err)
	}
	t.Run("subtest", func(t *testing.T) {
		if err := e2eFile(1); err != nil {
			t.Fatalf("a subtest in naming_e2e_test.go: %v", err)
		}
	})
}
