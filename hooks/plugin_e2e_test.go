package hooks_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowerhq/flower/hooks"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

func TestE2E_PluginDeniesMainThreadBash(t *testing.T) {
	t.Parallel()
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	bed := mainBed(t, "plugin test", bashCall("echo plugin > plugin-out.txt", "write"), bashCall("cat big.txt | head -n 300", "glance"), scripted.Reply{Text: "plugin done"})
	putFile(t, bed.Workspace, "big.txt", []byte(bigText(400)))
	// The plugin as committed, with the binary where the set-up script puts it.
	bin, err := os.ReadFile(hook)
	if err != nil {
		t.Fatal(err)
	}
	plug := pluginWith(t, bin)
	run := runClaude(t, bed, nil, "plugin test", "--plugin-dir", plug, "--allowedTools", "Bash")
	if run.Result.Get("result").String() != "plugin done" {
		t.Fatalf("exit %d result %s stderr %s", run.ExitCode, run.Result.Raw, run.Stderr)
	}
	if init := run.OfType("system", "init"); len(init) == 0 || !strings.Contains(init[0].Get("plugins").Raw, `"flower"`) {
		t.Errorf("plugin not listed in system/init")
	}
	if r := lastResult(t, bed.Model.RequestsFor("main")[1]); !r.IsError || !strings.Contains(r.Content, hooks.DelegateReason("Bash")) {
		t.Errorf("plugin did not deny the main-thread Bash: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(bed.Workspace, "plugin-out.txt")); err == nil {
		t.Errorf("the denied command ran")
	}
	// The glance passes (--glance) and its 14,999-char output (300 lines, final newline trimmed) is spilled
	// into the project's .flower/spill/.
	glance := lastResult(t, bed.Model.RequestsFor("main")[2])
	files, _ := filepath.Glob(filepath.Join(bed.Workspace, ".flower", "spill", "*.txt"))
	if glance.IsError || len(files) != 1 || !strings.HasPrefix(glance.Content, hooks.SpillPointerLead) ||
		!strings.Contains(glance.Content, " 14999") || !strings.Contains(glance.Content, files[0]) {
		t.Errorf("plugin glance/spill: files %v, result %.200q", files, glance.Content)
	}
}

func copyTo(t *testing.T, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
}
