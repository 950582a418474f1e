package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(v)
	if err := os.WriteFile(path, js, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCheckManaged: managed settings that switch hooks off are refused,
// naming the file and key (drop-in folder too); others pass (the control).
func TestCheckManaged(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		settings   map[string]any
		want       string // "" for no refusal
	}{
		{"nothing", "", nil, ""},
		{"harmless", "managed-settings.json", map[string]any{"cleanupPeriodDays": 3}, ""},
		{"hooks false", "managed-settings.json", map[string]any{"disableAllHooks": false}, ""},
		{"disable", "managed-settings.json", map[string]any{"disableAllHooks": true}, "managed-settings.json sets disableAllHooks"},
		{"managed only", "managed-settings.json", map[string]any{"allowManagedHooksOnly": true}, "managed-settings.json sets allowManagedHooksOnly"},
		{"drop-in", filepath.Join("managed-settings.d", "10-x.json"), map[string]any{"allowManagedHooksOnly": true}, "10-x.json sets allowManagedHooksOnly"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.file != "" {
				writeJSONFile(t, filepath.Join(dir, tc.file), tc.settings)
			}
			err := checkManaged(dir)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !isAuthorityError(err) {
				t.Fatalf("err %v, want an AuthorityError with %q", err, tc.want)
			}
		})
	}
}

// TestAPIPins: a workspace env entry flower has its own value for is
// pinned to it; a secret, one flower has no value for, or a top-level
// apiKeyHelper/model is refused naming file and key; the opt-in lets all
// through; other env entries are nobody's business (the controls).
func TestAPIPins(t *testing.T) {
	own := map[string]string{"ANTHROPIC_BASE_URL": "http://flower", "ANTHROPIC_API_KEY": "sk-own", "HTTPS_PROXY": "http://p"}
	getenv := func(k string) string { return own[k] }
	for _, tc := range []struct {
		name     string
		file     string
		settings map[string]any
		trusted  bool
		pins     map[string]string
		refuse   string
	}{
		{"other env", "settings.json", map[string]any{"env": map[string]any{"FOO": "1"}}, false, map[string]string{}, ""},
		{"base url", "settings.json", map[string]any{"env": map[string]any{"ANTHROPIC_BASE_URL": "http://decoy"}}, false, map[string]string{"ANTHROPIC_BASE_URL": "http://flower"}, ""},
		{"proxy local", "settings.local.json", map[string]any{"env": map[string]any{"HTTPS_PROXY": "http://evil"}}, false, map[string]string{"HTTPS_PROXY": "http://p"}, ""},
		{"no own value", "settings.json", map[string]any{"env": map[string]any{"ANTHROPIC_MODEL": "x"}}, false, nil, "settings.json sets env.ANTHROPIC_MODEL"},
		{"secret", "settings.local.json", map[string]any{"env": map[string]any{"ANTHROPIC_API_KEY": "sk-ws"}}, false, nil, "settings.local.json sets env.ANTHROPIC_API_KEY"},
		{"helper", "settings.json", map[string]any{"apiKeyHelper": "echo k"}, false, nil, "settings.json sets apiKeyHelper"},
		{"trusted", "settings.json", map[string]any{"env": map[string]any{"ANTHROPIC_API_KEY": "sk-ws"}, "model": "m"}, true, map[string]string{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			writeJSONFile(t, filepath.Join(ws, ".claude", tc.file), tc.settings)
			pins, err := apiPins(ws, getenv, tc.trusted)
			if tc.refuse != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refuse) || strings.Contains(err.Error(), "sk-ws") {
					t.Fatalf("err %v, want a refusal with %q and no value", err, tc.refuse)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(pins) != len(tc.pins) {
				t.Fatalf("pins %v, want %v", pins, tc.pins)
			}
			for k, v := range tc.pins {
				if pins[k] != v {
					t.Errorf("pin %s = %q, want %q", k, pins[k], v)
				}
			}
		})
	}
}

// TestBuildArgsPinsAndProvesLive: with Authority the settings layer pins
// the hook switches and the env, and carries the live SessionStart hook;
// without it (the control) neither.
func TestBuildArgsPinsAndProvesLive(t *testing.T) {
	spec := NewAgentSpec("w", "")
	for _, auth := range []bool{true, false} {
		b, err := BuildArgs(spec, BuildOptions{Cwd: "/ws", HookPath: "/bin/flower-hook", Authority: auth, Pins: map[string]string{"ANTHROPIC_BASE_URL": "http://flower"}})
		if err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(b.Settings)
		s := string(js)
		has := strings.Contains(s, `"disableAllHooks":false`) && strings.Contains(s, `"allowManagedHooksOnly":false`) &&
			strings.Contains(s, `"ANTHROPIC_BASE_URL":"http://flower"`) && strings.Contains(s, `"SessionStart"`) && strings.Contains(s, "live")
		if has != auth {
			t.Errorf("authority %v: settings %s", auth, s)
		}
	}
}

// TestInstructionsAtStart: a judge-like spec gets --setting-sources=user,
// CLAUDE_CODE_DISABLE_CLAUDE_MDS=1 and the start snapshot in its appended
// prompt; a plain spec (the control) gets none of them.
func TestInstructionsAtStart(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "CLAUDE.md"), []byte("START"), 0o600); err != nil {
		t.Fatal(err)
	}
	snap := snapshotInstructions(ws)
	for _, at := range []bool{true, false} {
		spec := NewAgentSpec("j", "rules")
		spec.InstructionsAtStart = at
		b, err := BuildArgs(spec, BuildOptions{HookPath: "/bin/flower-hook", StartInstructions: snap})
		if err != nil {
			t.Fatal(err)
		}
		argv := strings.Join(b.Args, "\n")
		got := strings.Contains(argv, "--setting-sources=user") && b.Env["CLAUDE_CODE_DISABLE_CLAUDE_MDS"] == "1" && strings.Contains(argv, "START")
		if got != at {
			t.Errorf("InstructionsAtStart %v: argv %q env %v", at, argv, b.Env)
		}
	}
}
