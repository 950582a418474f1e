package acceptance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowerhq/flower/hooks"
	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/testbed"
)

// marketplaceClone copies what a clone of the repository holds for the
// marketplace (.claude-plugin/ and plugin/, without the built plugin/bin)
// into a temp folder: the GitHub-install case.
func marketplaceClone(t *testing.T) string {
	t.Helper()
	root := testbed.RepoRoot(t)
	clone := filepath.Join(t.TempDir(), "flower")
	if err := os.MkdirAll(clone, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{".claude-plugin", "plugin"} {
		if out, err := testbed.Command(t, "cp", "-r", filepath.Join(root, d), clone).CombinedOutput(); err != nil {
			t.Fatalf("copy %s: %v %s", d, err, out)
		}
	}
	if err := os.RemoveAll(filepath.Join(clone, "plugin", "bin")); err != nil {
		t.Fatal(err)
	}
	return clone
}

// TestE2E_MarketplaceInstall: `claude plugin marketplace add <clone>` and
// `claude plugin install flower@flower` on the real CLI, then claude -p
// with the scripted model. With flower-hook on PATH the guard fires (the
// main thread's Bash denied with the delegate advice, the subagent's runs);
// with none anywhere the main thread's Bash is denied with the one line
// naming go install. The control, the same bed before the install, runs
// the main thread's Bash.
func TestE2E_MarketplaceInstall(t *testing.T) {
	flowerbin.SkipShort(t, "it builds flower-hook and runs claude plugin commands")
	t.Parallel()
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	hookDir := filepath.Join(t.TempDir(), "bin")
	if err := os.MkdirAll(hookDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(hook, filepath.Join(hookDir, "flower-hook")); err != nil {
		t.Fatal(err)
	}
	clone := marketplaceClone(t)
	for _, tc := range []struct {
		name    string
		path    string
		install bool
	}{
		{"flower-hook on PATH", hookDir + ":/usr/bin:/bin", true},
		{"no flower-hook", "/usr/bin:/bin", true},
		{"control: not installed", "/usr/bin:/bin", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bed := delegationBed(t)
			env := append(bed.Env(), "PATH="+tc.path)
			if tc.install {
				for _, args := range [][]string{{"plugin", "marketplace", "add", clone}, {"plugin", "install", "flower@flower"}} {
					cmd := bed.Command(testbed.Context(t), args...)
					cmd.Env = env
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Fatalf("claude %s: %v\n%s", strings.Join(args, " "), err, out)
					}
				}
			}
			cmd := bed.Command(testbed.Context(t), "-p", "--output-format", "stream-json", "--verbose",
				"--allowedTools", "Bash", "--agents", workerAgents, "--", "please make the file")
			cmd.Env = env
			out, _ := cmd.Output()
			if _, res := testbed.ParseStream(out); res.Get("result").String() != "GUARDED-REPLY-OK" {
				t.Fatalf("claude -p: result %s", res.Raw)
			}
			_, err := os.Stat(filepath.Join(bed.Workspace, "main-wrote-this"))
			switch {
			case !tc.install:
				if err != nil {
					t.Errorf("control: the main thread's Bash did not run: %v", err)
				}
			case strings.Contains(tc.path, hookDir):
				assertDelegated(t, bed)
			default:
				trs := bed.Model.RequestsFor("main")[1].ToolResults()
				if err == nil || len(trs) != 1 || !trs[0].IsError || !strings.Contains(trs[0].Content, "denied to stay safe: install it with "+hooks.InstallHint) {
					t.Errorf("without flower-hook: main's Bash ran %v, result %+v; want the install line", err == nil, trs)
				}
			}
		})
	}
}
