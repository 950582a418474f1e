package harness_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/hooks"
	"github.com/flowerhq/flower/testkit/testbed"
)

// TestRun_GuardsAnsweredInProcess: with flower-hook-lite beside
// flower-hook, a step's whitelist guard is decided by the Runtime's
// decision server: the judge's Bash is denied and reported as before, and
// flower-hook never starts for it (a wrapper named flower-hook logs every
// guard it is started for; it still runs live and index). Control: without
// flower-hook-lite the same step starts flower-hook for the whitelist.
func TestRun_GuardsAnsweredInProcess(t *testing.T) {
	t.Parallel()
	for _, withLite := range []bool{true, false} {
		t.Run(map[bool]string{true: "lite", false: "control: no lite"}[withLite], func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			log := filepath.Join(dir, "started.log")
			wrapper := "#!/bin/sh\nprintf '%s\\n' \"$1\" >> " + hooks.ShellQuote(log) + "\nexec " + hooks.ShellQuote(hookBinary(t)) + " \"$@\"\n"
			if err := os.WriteFile(filepath.Join(dir, "flower-hook"), []byte(wrapper), 0o755); err != nil {
				t.Fatal(err)
			}
			if withLite {
				if err := os.Symlink(testbed.BuildBinary(t, "./cmd/flower-hook-lite"), filepath.Join(dir, hooks.LiteBin)); err != nil {
					t.Fatal(err)
				}
			}
			judgeTriesBash(t, func(_ *testbed.Bed, o *harness.Options) { o.HookPath = filepath.Join(dir, "flower-hook") })
			started, _ := os.ReadFile(log)
			lines := strings.Fields(string(started))
			if !strings.Contains(string(started), hooks.GuardLive) {
				t.Errorf("the wrapper logged no live guard: %q", lines)
			}
			if ran := strings.Contains(string(started), hooks.GuardWhitelist); ran == withLite {
				t.Errorf("flower-hook started for the whitelist: %v (flower-hook-lite beside it: %v); started for %q", ran, withLite, lines)
			}
		})
	}
}
