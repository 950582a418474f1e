package hooks

import "encoding/json"
import "os"
import "path/filepath"
import "strings"
import "testing"

import "github.com/flowerhq/flower/internal/testbed"

// The plugin's delegate and fence hooks are exactly DenyCommand: the committed
// hooks.json cannot drift from the wrapper the tests prove.
func TestPluginHooksJSONFailsClosed(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "plugin", "hooks", "hooks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Hooks map[string][]struct {
			Matcher string
			Hooks   []struct{ Command string }
		}
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	pre := f.Hooks["PreToolUse"]
	if len(pre) != 2 || len(pre[0].Hooks) != 1 || len(pre[1].Hooks) != 1 {
		t.Fatalf("PreToolUse = %+v, want a delegate and a fence hook", pre)
	}
	if got, want := pre[0].Hooks[0].Command, DenyCommand(PluginCommand, GuardDelegate, "--glance"); got != want {
		t.Errorf("plugin delegate command =\n%s\nwant\n%s", got, want)
	}
	if got, want := pre[1].Hooks[0].Command, DenyCommand(PluginCommand, GuardFence, "--project"); got != want || pre[1].Matcher != FenceTools {
		t.Errorf("plugin fence on %q =\n%s\nwant on %q\n%s", pre[1].Matcher, got, FenceTools, want)
	}
}

// DenyCommand run by /bin/sh, as Claude Code runs hook commands: only
// flower-hook's own answer (exit 0 with output) passes through; a missing
// or non-executable binary, exit 1, a crash, or exit 0 without an answer
// become exit 2 with a reason on stderr; flower-hook's own exit 2 stays 2.
func TestDenyCommandFailsClosed(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const answer = `{"hookSpecificOutput":{"permissionDecision":"deny"}}`
	tests := []struct {
		name     string
		bin      string
		code     int
		stdout   string
		reasonIn string
	}{
		{"answers", script("ok", "cat >/dev/null; echo '"+answer+"'", 0o755), 0, answer + "\n", ""},
		{"own deny", script("deny", "echo 'flower-hook delegate could not understand' >&2; exit 2", 0o755), 2, "", "could not understand"},
		{"missing", filepath.Join(dir, "nope", "flower-hook"), 2, "", "denied to stay safe"},
		{"not executable", script("noexec", "echo '"+answer+"'", 0o644), 2, "", "exit 126"},
		{"exits 1", script("one", "exit 1", 0o755), 2, "", "exit 1:"},
		{"crashes", script("crash", "kill -SEGV $$", 0o755), 2, "", "denied to stay safe"},
		{"silent success", script("silent", "exit 0", 0o755), 2, "", "exit 0:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := testbed.Command(t, "/bin/sh", "-c", DenyCommand(ShellQuote(tt.bin), GuardDelegate, "--glance"))
			cmd.Stdin = strings.NewReader(`{"tool_name":"Bash"}`)
			out, errb, code := testbed.Exec(t, cmd)
			if code != tt.code || out != tt.stdout || !strings.Contains(errb, tt.reasonIn) {
				t.Errorf("exit %d stdout %q stderr %q, want exit %d stdout %q stderr with %q",
					code, out, errb, tt.code, tt.stdout, tt.reasonIn)
			}
		})
	}
}

func TestCheckPlugin(t *testing.T) {
	dir := t.TempDir()
	if err := CheckPlugin(dir); err == nil || !strings.Contains(err.Error(), "scripts/setup.sh") {
		t.Errorf("missing binary: %v, want an error naming scripts/setup.sh", err)
	}
	p := filepath.Join(dir, PluginHookBin)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CheckPlugin(dir); err == nil || !strings.Contains(err.Error(), "scripts/setup.sh") {
		t.Errorf("not executable: %v, want an error naming scripts/setup.sh", err)
	}
	if err := os.Chmod(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := CheckPlugin(dir); err != nil {
		t.Errorf("executable binary: %v", err)
	}
}
