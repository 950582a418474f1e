package hooks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowerhq/flower/testkit/testbed"
)

// The plugin's hook commands are exactly pluginDenyCommand (delegate, and
// the fence on FenceTools) and pluginCommand: the committed hooks.json
// cannot drift from the commands the tests prove.
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
	want := map[string][]string{
		"PreToolUse": {pluginDenyCommand(GuardDelegate, "--glance"), pluginDenyCommand(GuardFence, "--project")},
		"PostToolUse": {
			pluginCommand(`spill --dir "${CLAUDE_PROJECT_DIR:-.}/.flower"`),
			pluginCommand(`index --dir "${CLAUDE_PROJECT_DIR:-.}/.flower"`),
		},
	}
	for event, cmds := range want {
		got := f.Hooks[event]
		if len(got) != len(cmds) {
			t.Fatalf("%s = %+v, want %d hooks", event, got, len(cmds))
		}
		for i, c := range cmds {
			if len(got[i].Hooks) != 1 || got[i].Hooks[0].Command != c {
				t.Errorf("%s[%d] = %+v\nwant %s", event, i, got[i].Hooks, c)
			}
		}
	}
	if pre := f.Hooks["PreToolUse"]; pre[1].Matcher != FenceTools {
		t.Errorf("plugin fence on %q, want on %q", pre[1].Matcher, FenceTools)
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

// The plugin's commands find flower-hook in the plugin's bin/, else beside
// a flower on PATH, else on PATH; with none the deny guard denies with one
// line naming the install and a transforming guard does nothing. Each
// stand-in answers with its own name, so a case that picks the wrong one
// fails.
func TestPluginCommandLocatesFlowerHook(t *testing.T) {
	stand := func(dir, name, answer string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		body := "#!/bin/sh\ncat >/dev/null; echo '" + answer + "'\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name         string
		setup        func(root, plugin string) []string // PATH entries
		code         int
		stdout, errs string
	}{
		{"plugin bin", func(root, plugin string) []string {
			stand(filepath.Join(plugin, "bin"), "flower-hook", "plugin")
			stand(filepath.Join(root, "path"), "flower-hook", "path")
			return []string{filepath.Join(root, "path")}
		}, 0, "plugin\n", ""},
		{"beside flower", func(root, _ string) []string {
			stand(filepath.Join(root, "gobin"), "flower", "flower")
			stand(filepath.Join(root, "gobin"), "flower-hook", "beside")
			stand(filepath.Join(root, "path"), "flower-hook", "path")
			return []string{filepath.Join(root, "gobin"), filepath.Join(root, "path")}
		}, 0, "beside\n", ""},
		{"on PATH", func(root, _ string) []string {
			stand(filepath.Join(root, "gobin"), "flower", "flower")
			stand(filepath.Join(root, "path"), "flower-hook", "path")
			return []string{filepath.Join(root, "gobin"), filepath.Join(root, "path")}
		}, 0, "path\n", ""},
		{"none", func(root, _ string) []string {
			stand(filepath.Join(root, "gobin"), "flower", "flower")
			return []string{filepath.Join(root, "gobin")}
		}, 2, "", "denied to stay safe: install it with " + InstallHint + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			plugin := filepath.Join(root, "plugin")
			path := append(tt.setup(root, plugin), "/usr/bin", "/bin")
			run := func(command string) (string, string, int) {
				cmd := testbed.Command(t, "/bin/sh", "-c", command)
				cmd.Env = []string{"PATH=" + strings.Join(path, ":"), "CLAUDE_PLUGIN_ROOT=" + plugin}
				cmd.Stdin = strings.NewReader(`{"tool_name":"Bash"}`)
				return testbed.Exec(t, cmd)
			}
			out, errs, code := run(pluginDenyCommand(GuardDelegate, "--glance"))
			if code != tt.code || out != tt.stdout || !strings.HasSuffix(errs, tt.errs) || strings.Count(errs, "\n") > 1 {
				t.Errorf("deny: exit %d stdout %q stderr %q, want exit %d stdout %q stderr one line ending %q", code, out, errs, tt.code, tt.stdout, tt.errs)
			}
			out, errs, code = run(pluginCommand("spill --dir x"))
			if want := tt.stdout; code != 0 || out != want || errs != "" {
				t.Errorf("spill: exit %d stdout %q stderr %q, want exit 0 stdout %q", code, out, errs, want)
			}
		})
	}
}
