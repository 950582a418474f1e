package hooks_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowerhq/flower/hooks"
	"github.com/flowerhq/flower/testkit/testbed"
)

// The plugin's fence on a hand-run claude (flower claude): under
// bypassPermissions, where nothing else would stop it, a subagent's Write
// to ../outside is denied with the fence's reason, and so is its Write to
// the project's goal; with FLOWER_ALLOW_DIR naming the folder (the
// control) the first one lands, so the denial was the fence's.
func TestE2E_PluginFence(t *testing.T) {
	t.Parallel()
	bin, err := os.ReadFile(testbed.BuildBinary(t, "./cmd/flower-hook"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		target string // under WS/
		allow  bool
		landed bool
		reason string
	}{
		{"outside", "../outside/sub.txt", false, false, "--allow-dir"},
		{"goal", ".flower/notes/目标.md", false, false, hooks.FenceProtectedText},
		{"outside, allowed", "../outside/sub.txt", true, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bed := delegationBed(t, "fence please", "write", tool("Read", map[string]any{"file_path": "WS/seen.txt"}),
				tool("Write", map[string]any{"file_path": "WS/" + tc.target, "content": "from sub"}))
			putFile(t, bed.Workspace, "seen.txt", []byte("x"))
			outside := filepath.Join(filepath.Dir(bed.Workspace), "outside")
			for _, d := range []string{outside, filepath.Join(bed.Workspace, ".flower", "notes")} {
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			env := []string{"IS_SANDBOX=1"}
			if tc.allow {
				env = append(env, "FLOWER_ALLOW_DIR="+outside)
			}
			agents := `{"worker":{"description":"does work","prompt":"You are WORKER","tools":["Write","Read"]}}`
			run := runClaude(t, bed, env, "fence please", "--plugin-dir", pluginWith(t, bin), "--agents", agents, "--permission-mode", "bypassPermissions")
			if run.Result.Get("result").String() != "main done" {
				t.Fatalf("exit %d result %s\n%s", run.ExitCode, run.Result.Raw, run.Stderr)
			}
			sub := bed.Model.RequestsFor("sub")
			r := lastResult(t, sub[len(sub)-1])
			_, statErr := os.Stat(filepath.Join(bed.Workspace, tc.target))
			if tc.landed {
				if statErr != nil || r.IsError {
					t.Errorf("control: the allowed Write did not land (%v): %+v", statErr, r)
				}
				return
			}
			if statErr == nil || !r.IsError || !strings.Contains(r.Content, tc.reason) {
				t.Errorf("the subagent's Write to %s was not fenced (landed %v): %+v", tc.target, statErr == nil, r)
			}
		})
	}
}
