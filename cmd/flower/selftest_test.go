package main

import (
	"errors"
	"strings"
	"testing"
)

// TestMissingTempDirNamed: a TMPDIR that does not exist is named as such,
// not reported as guards that would not hold; the control, an existing
// TMPDIR (or none), passes, and any other self-test failure still says
// the guards would not hold.
func TestMissingTempDirNamed(t *testing.T) {
	err := errSelfTestStops(checkTempDir("/no/such/tmp"))
	if err == nil || !strings.Contains(err.Error(), "TMPDIR=/no/such/tmp is not a directory") || strings.Contains(err.Error(), "guards") {
		t.Errorf("missing TMPDIR: %v", err)
	}
	if err := checkTempDir(t.TempDir()); err != nil {
		t.Errorf("control: an existing TMPDIR: %v", err)
	}
	if err := checkTempDir(""); err != nil {
		t.Errorf("control: no TMPDIR: %v", err)
	}
	if err := errSelfTestStops(errors.New("the canary step failed")); !strings.Contains(err.Error(), "guards would not hold") {
		t.Errorf("control: another failure: %v", err)
	}
}
