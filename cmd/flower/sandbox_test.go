package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/flowerhq/flower/harness"
)

// TestApplySandbox: auto turns the sandbox on where the check passes and
// warns once where it does not; require refuses without it, naming what
// the check said; off never asks; a misspelt mode is a usage error.
// Control: a passing check under auto prints nothing.
func TestApplySandbox(t *testing.T) {
	missing := func() error {
		return errors.New("bubblewrap (bwrap) was not found: install it: apt-get install -y bubblewrap")
	}
	ok := func() error { return nil }
	asked := false
	never := func() error { asked = true; return nil }
	for _, c := range []struct {
		mode     string
		check    func() error
		on       bool
		err, out string
	}{
		{"auto", ok, true, "", ""},
		{"", ok, true, "", ""},
		{"auto", missing, false, "", "look-only rests on the classifier alone: install bubblewrap"},
		{"require", ok, true, "", ""},
		{"require", missing, false, "--sandbox=require: bubblewrap (bwrap) was not found: install it: apt-get install -y bubblewrap", ""},
		{"off", never, false, "", ""},
		{"on", ok, false, `--sandbox "on": say auto, require or off`, ""},
	} {
		var ro harness.Options
		var out strings.Builder
		err := applySandbox(c.mode, &ro, &out, c.check)
		if ro.Sandbox != c.on || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) ||
			(c.out == "") != (out.Len() == 0) || !strings.Contains(out.String(), c.out) || strings.Count(out.String(), "\n") > 1 {
			t.Errorf("%q: sandbox %v, err %v, printed %q", c.mode, ro.Sandbox, err, out.String())
		}
	}
	if asked {
		t.Error("--sandbox=off ran the check")
	}
}
