package hooks_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowerhq/flower/hooks"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// pluginWith copies the committed plugin into a temp folder with bin as its
// flower-hook (nil: no binary at all).
func pluginWith(t *testing.T, bin []byte) string {
	t.Helper()
	plug := filepath.Join(t.TempDir(), "flower")
	root := testbed.RepoRoot(t)
	for _, f := range []string{".claude-plugin/plugin.json", "hooks/hooks.json"} {
		data, err := os.ReadFile(filepath.Join(root, "plugin", f))
		if err != nil {
			t.Fatal(err)
		}
		copyTo(t, filepath.Join(plug, f), data, 0o644)
	}
	if bin != nil {
		copyTo(t, filepath.Join(plug, hooks.PluginHookBin), bin, 0o755)
	}
	return plug
}

// Deny guards fail closed when flower-hook cannot run: under
// bypassPermissions (nothing else would stop the call) the plugin's
// delegate guard still denies the main thread's Bash when the binary is
// missing or exits 1, and so does a settings.json hook as the harness
// writes it when its binary is missing. The control runs the same Bash
// without the plugin: it runs, so the test can fail.
func TestE2E_DenyGuardsFailClosedWithoutTheBinary(t *testing.T) {
	t.Parallel()
	exit1 := []byte("#!/bin/sh\nexit 1\n")
	crash := []byte("#!/bin/sh\nkill -SEGV $$\n")
	cases := []struct {
		name   string
		args   func(t *testing.T, bed *testbed.Bed) []string
		denied bool
	}{
		{"plugin, binary absent", func(t *testing.T, _ *testbed.Bed) []string {
			return []string{"--plugin-dir", pluginWith(t, nil)}
		}, true},
		{"plugin, binary exits 1", func(t *testing.T, _ *testbed.Bed) []string {
			return []string{"--plugin-dir", pluginWith(t, exit1)}
		}, true},
		{"plugin, binary crashes", func(t *testing.T, _ *testbed.Bed) []string {
			return []string{"--plugin-dir", pluginWith(t, crash)}
		}, true},
		{"settings, binary absent", func(t *testing.T, bed *testbed.Bed) []string {
			missing := filepath.Join(t.TempDir(), "no such dir", "flower-hook")
			cmd := hooks.DenyCommand(hooks.ShellQuote(missing), hooks.GuardDelegate, "--glance")
			return []string{"--settings", writeSettings(t, bed.Home, hookEntry{"PreToolUse", hooks.DefaultDelegateTools, cmd})}
		}, true},
		{"control: no plugin", func(*testing.T, *testbed.Bed) []string { return nil }, false},
		// Why the wrapper: the bare command with its binary missing fails
		// open on the real CLI.
		{"control: unwrapped, binary absent", func(t *testing.T, bed *testbed.Bed) []string {
			missing := filepath.Join(t.TempDir(), "flower-hook")
			cmd := hooks.ShellQuote(missing) + " delegate --glance"
			return []string{"--settings", writeSettings(t, bed.Home, hookEntry{"PreToolUse", hooks.DefaultDelegateTools, cmd})}
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bed := mainBed(t, "fail closed", bashCall("touch WS/marker.txt", "marker"), scripted.Reply{Text: "fail closed done"})
			args := append(c.args(t, bed), "--permission-mode", "bypassPermissions")
			// No flower or flower-hook on PATH: the plugin would find them.
			run := runClaude(t, bed, []string{"IS_SANDBOX=1", "PATH=/usr/bin:/bin"}, "fail closed", args...)
			if run.Result.Get("result").String() != "fail closed done" {
				t.Fatalf("exit %d result %s stderr %s", run.ExitCode, run.Result.Raw, run.Stderr)
			}
			r := lastResult(t, bed.Model.RequestsFor("main")[1])
			_, statErr := os.Stat(filepath.Join(bed.Workspace, "marker.txt"))
			ran := statErr == nil
			if c.denied {
				if ran || !r.IsError || !strings.Contains(r.Content, "denied to stay safe") || !strings.Contains(r.Content, "scripts/setup.sh") {
					t.Errorf("the Bash was not denied: marker created %v, result %+v", ran, r)
				}
				return
			}
			if !ran || r.IsError {
				t.Errorf("control: the Bash did not run: marker created %v, result %+v", ran, r)
			}
		})
	}
}

// Fail closed: input the guard cannot understand → delegate and whitelist
// deny with exit 2 and a reason on stderr; spill leaves the output alone.
func TestE2E_FailClosedOnBadInput(t *testing.T) {
	t.Parallel()
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	garbage := bytes.Repeat([]byte("\x00garbage{\"tool_name\":"), 10<<20/21)
	inputs := map[string][]byte{
		"empty": nil, "truncated": []byte(`{"tool_name":"Bash","tool_input":{"command":"ls"`),
		"array": []byte(`["tool_name","Bash"]`), "string": []byte(`"Bash"`), "null": []byte(`null`),
		"10MB garbage": garbage,
	}
	dir := t.TempDir()
	for name, in := range inputs {
		for _, g := range [][]string{{"delegate"}, {"whitelist", "--allow", "Read"}, {"spill", "--dir", dir}} {
			cmd := testbed.Command(t, hook, g...)
			cmd.Stdin = bytes.NewReader(in)
			out, errb, code := testbed.Exec(t, cmd)
			if strings.Contains(errb, "panic") {
				t.Errorf("%s %s panicked: %s", g[0], name, errb)
			}
			if g[0] == "spill" {
				if code != 0 || strings.TrimSpace(out) != "{}" {
					t.Errorf("spill on %s: exit %d out %q, want 0 {}", name, code, out)
				}
				continue
			}
			if code != hooks.ExitDeny || !strings.Contains(errb, "flower-hook "+g[0]+hooks.UnreadableText) {
				t.Errorf("%s on %s: exit %d stderr %q, want exit 2 with a reason", g[0], name, code, errb)
			}
		}
	}
}
