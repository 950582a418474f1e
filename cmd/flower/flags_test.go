package main

import (
	"testing"

	"github.com/urfave/cli/v2"
)

// TestJSONFlag: --json follows FLOWER_JSON (1 on, 0 off, unset off) and an
// explicit --json or --json=false wins over it. (TestE2E_DemoPipedForPeople
// runs the piped demo once, with --json=false over FLOWER_JSON=1.)
func TestJSONFlag(t *testing.T) {
	for _, tc := range []struct {
		env  string
		args []string
		want bool
	}{
		{"", nil, false},
		{"1", nil, true},
		{"0", nil, false},
		{"1", []string{"--json=false"}, false},
		{"0", []string{"--json"}, true},
		{"", []string{"--json"}, true},
	} {
		t.Setenv("FLOWER_JSON", tc.env)
		var got bool
		app := &cli.App{Flags: []cli.Flag{jsonFlag(&got, "")}, Action: func(*cli.Context) error { return nil }}
		if err := app.Run(append([]string{"flower"}, tc.args...)); err != nil {
			t.Fatalf("FLOWER_JSON=%q %q: %v", tc.env, tc.args, err)
		}
		if got != tc.want {
			t.Errorf("FLOWER_JSON=%q %q: json %v, want %v", tc.env, tc.args, got, tc.want)
		}
	}
}
