package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestEveryFlagHasAnEnvVar: design.md §3 promises a FLOWER_* variable for
// every flag of every command.
func TestEveryFlagHasAnEnvVar(t *testing.T) {
	app := NewApp(nil, &bytes.Buffer{}, &bytes.Buffer{})
	var walk func(path string, flags []cli.Flag, cmds []*cli.Command)
	walk = func(path string, flags []cli.Flag, cmds []*cli.Command) {
		for _, f := range flags {
			ev, ok := f.(interface{ GetEnvVars() []string })
			if !ok || len(ev.GetEnvVars()) == 0 || !strings.HasPrefix(ev.GetEnvVars()[0], "FLOWER_") {
				t.Errorf("%s --%s has no FLOWER_* variable", path, f.Names()[0])
			}
		}
		for _, c := range cmds {
			walk(path+" "+c.Name, c.Flags, c.Subcommands)
		}
	}
	walk("flower", app.Flags, app.Commands)
}

// TestUsageErrorsExit2: bad flags and arguments are usage errors on every
// command, with one usage line instead of a page of help.
func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{
		{"--bogus"}, {"step", "--bogus", "x"}, {"sessions", "list", "--bogus"}, {"runs", "extra"},
		{"model", "serve"}, {"doctor", "extra"}, {"demo", "extra"}, {"ask"}, {"wake-state", "x"},
	} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), append([]string{"flower"}, args...), strings.NewReader(""), &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), "Usage:") || strings.Count(errb.String(), "\n") > 3 {
			t.Errorf("flower %v: exit %d, stderr %q", args, code, errb.String())
		}
	}
}
