package testbed

import (
	"strings"
	"testing"
)

// A test outside a *_e2e_test.go file is told to move (this file is the
// control for TestE2EFileAccepted in naming_e2e_test.go).
func TestE2EFileRefusesAUnitFile(t *testing.T) {
	err := e2eFile(1)
	if err == nil || !strings.Contains(err.Error(), "naming_test.go spawns claude") {
		t.Fatalf("e2eFile from naming_test.go = %v, want a refusal naming the file", err)
	}
	t.Run("subtest", func(t *testing.T) {
		if err := e2eFile(1); err == nil {
			t.Fatal("a subtest's closure in naming_test.go was accepted")
		}
	})
}
