package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/internal/pinned"
	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/testbed"
)

// versionLine is doctor's version line for claude: a check mark for the
// pinned version, the "untested" warning for any other (scripts/compat.sh
// runs the suite on other versions).
func versionLine(t *testing.T, claude string) string {
	out, err := testbed.Command(t, claude, "--version").Output()
	if err != nil {
		t.Fatalf("claude --version: %v", err)
	}
	if v := strings.TrimSpace(string(out)); !strings.HasPrefix(v, pinned.ClaudeVersion) {
		return "! version      " + v + " (flower is tested on " + pinned.ClaudeVersion
	}
	return "✓ version      " + pinned.ClaudeVersion
}

// newerClaude is claude reporting version 2.1.999.
func newerClaude(t *testing.T, claude string) string {
	p := filepath.Join(t.TempDir(), "claude")
	script := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '2.1.999 (Claude Code)'; exit 0; fi\nexec " + flowerbin.ShellQuote(claude) + " \"$@\"\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestE2E_Doctor: the guard self-test passes with the real flower-hook and
// fails (exit 1) when the hook does nothing (its silent success is denied
// by the fail-closed wrapper, so no guard decision is reported); a missing claude is named; a
// guards plugin without its flower-hook is refused, naming scripts/setup.sh;
// a claude of another version passes with the "untested" warning.
func TestE2E_Doctor(t *testing.T) {
	t.Parallel()
	claude := testbed.ClaudePath(t)
	flower := testbed.BuildBinary(t, "./cmd/flower")
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	home := t.TempDir()
	env := append(os.Environ(), "HOME="+home, "ANTHROPIC_API_KEY=sk-test", "FLOWER_CLAUDE="+claude, "TERM=xterm")
	plugin := guardedPlugin(t)
	noBin := filepath.Join(t.TempDir(), "plugin")
	if out, err := testbed.Command(t, "cp", "-r", plugin, noBin).CombinedOutput(); err != nil {
		t.Fatalf("copy plugin: %v %s", err, out)
	}
	if err := os.Remove(filepath.Join(noBin, "bin", "flower-hook")); err != nil {
		t.Fatal(err)
	}
	userHome := t.TempDir()
	if err := os.MkdirAll(filepath.Join(userHome, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(userHome, ".claude", "settings.json"), []byte(`{"enabledPlugins":{"flower@flower":true}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		want   []string
		plugin string
		env    []string // extra environment (TERM=dumb: ASCII only, every line)
	}{
		{"healthy", []string{"--hook", hook}, 0, []string{"✓ workspace", "✓ self-test", versionLine(t, claude), "✓ plugin"}, "", nil},
		{"untested claude version", []string{"--hook", hook, "--claude", newerClaude(t, claude)}, 0, []string{"! version      2.1.999 (Claude Code) (flower is tested on " + pinned.ClaudeVersion, "✓ self-test"}, "", nil},
		{"hook that never denies", []string{"--hook", "/bin/true"}, 1, []string{"✗ self-test", "no guard report reached"}, "", nil},
		{"missing claude", []string{"--claude", "/nonexistent/claude"}, 1, []string{"✗ claude", "claude not found at /nonexistent/claude"}, "", nil},
		{"bad flag", []string{"--bogus"}, 2, []string{"unknown flag --bogus"}, "", nil},
		{"plugin without flower-hook", []string{"--hook", hook}, 1, []string{"✗ plugin", "bin/flower-hook", "scripts/setup.sh"}, noBin, nil},
		// TERM=dumb: the marks are ASCII and so is every line (the
		// cases above, with TERM=xterm, are the control: they carry ✓ and ✗).
		// The guards plugin enabled at user scope (what a bare `claude
		// plugin install` does): a warning, not a failure; "healthy" above
		// is the control (its HOME enables nothing: no such line).
		{"plugin at user scope", []string{"--hook", hook}, 0, []string{"! plugin scope", userHome + "/.claude/settings.json", "--scope project", "✓ self-test"}, "", []string{"HOME=" + userHome}},
		{"dumb terminal", []string{"--hook", "/bin/true", "--claude", newerClaude(t, claude)}, 1, []string{"ok workspace", "! version", "x self-test"}, "", []string{"TERM=dumb"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := testbed.Command(t, flower, append([]string{"doctor"}, tc.args...)...)
			if tc.plugin == "" {
				tc.plugin = plugin
			}
			cwd := t.TempDir() // the default workspace: the self-test must leave it empty
			cmd.Env, cmd.Dir = append(append(env, "FLOWER_PLUGIN_DIR="+tc.plugin), tc.env...), cwd
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			cmd.Run()
			if got := cmd.ProcessState.ExitCode(); got != tc.code {
				t.Errorf("exit %d, want %d\n%s", got, tc.code, out.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			if tc.name == "healthy" && strings.Contains(out.String(), "plugin scope") {
				t.Errorf("a HOME without the plugin got the scope warning:\n%s", out.String())
			}
			if i := strings.IndexFunc(out.String(), func(r rune) bool { return r > 127 }); tc.env != nil && tc.name == "dumb terminal" && i >= 0 {
				t.Errorf("not ASCII at %d under TERM=dumb:\n%s", i, out.String())
			}
			if ents, _ := os.ReadDir(cwd); len(ents) != 0 {
				t.Errorf("doctor left %v in the workspace", ents)
			}
		})
	}
}

// TestE2E_DoctorAndVersionJSON: doctor --json is one object whose ok says
// whether any check failed, with the self-test among its checks; a hook
// that never denies (the control) fails it and exits 1. version --json
// names the pinned claude.
func TestE2E_DoctorAndVersionJSON(t *testing.T) {
	t.Parallel()
	claude := testbed.ClaudePath(t)
	flower := testbed.BuildBinary(t, "./cmd/flower")
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	env := append(os.Environ(), "HOME="+t.TempDir(), "ANTHROPIC_API_KEY=sk-test", "FLOWER_CLAUDE="+claude)
	for _, tc := range []struct {
		hook, selfTest string
	}{{hook, "ok"}, {"/bin/true", "fail"}} {
		cmd := testbed.Command(t, flower, "doctor", "--json", "--hook", tc.hook)
		cmd.Env, cmd.Dir = env, t.TempDir()
		out, _ := cmd.Output()
		js := gjson.ParseBytes(out)
		checkSchema(t, "doctor --json", js.Raw)
		failed := false
		for _, c := range js.Get("checks").Array() {
			failed = failed || c.Get("status").String() == "fail"
		}
		st := js.Get(`checks.#(name=="self-test").status`).String()
		if st != tc.selfTest || js.Get("ok").Bool() == failed || (cmd.ProcessState.ExitCode() == 0) == failed {
			t.Errorf("--hook %s: exit %d, self-test %q: %s", tc.hook, cmd.ProcessState.ExitCode(), st, out)
		}
	}
	out, _ := flowerbin.Output(t, testbed.Command(t, flower, "version", "--json"), "version --json")
	if v := gjson.ParseBytes(out); v.Get("kind").String() != "version" || v.Get("claude").String() != pinned.ClaudeVersion {
		t.Errorf("version --json: %s", out)
	}
}
