package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/testbed"
)

// TestE2E_CompletionLoadsInBash: the bash and zsh scripts parse in a real
// bash and, sourced, complete a command and a flag; the fish script parses
// when fish is there. Control: a cut script does not parse.
func TestE2E_CompletionLoadsInBash(t *testing.T) {
	flowerbin.SkipShort(t, "it builds flower and runs it")
	t.Parallel()
	bash := testbed.RequireTool(t, "bash", "the completion script is loaded in a real bash")
	flower := testbed.BuildBinary(t, "./cmd/flower")
	dir := t.TempDir()
	script := func(shell string) string {
		out, _ := flowerbin.Output(t, testbed.Command(t, flower, "completion", shell), "completion "+shell)
		p := filepath.Join(dir, shell)
		os.WriteFile(p, out, 0o600)
		return p
	}
	for _, shell := range []string{"bash", "zsh"} {
		if out, err := testbed.Command(t, bash, "-n", script(shell)).CombinedOutput(); err != nil {
			t.Errorf("bash -n on the %s script: %v %s", shell, err, out)
		}
	}
	const probe = `source "$1"; complete -p flower >/dev/null || exit 3
COMP_WORDS=(flower ses); COMP_CWORD=1; _flower; echo "${COMPREPLY[*]}"
COMP_WORDS=(flower runs -C /x show --j); COMP_CWORD=5; _flower; echo "${COMPREPLY[*]}"`
	out, err := testbed.Command(t, bash, "-c", probe, "probe", script("bash")).CombinedOutput()
	if err != nil || string(out) != "sessions\n--json\n" {
		t.Errorf("sourced completion: %v %q", err, out)
	}
	dynamicCompletion(t, bash, flower, script("bash"))
	b, _ := os.ReadFile(script("bash"))
	cut := filepath.Join(dir, "cut")
	os.WriteFile(cut, b[:len(b)/2], 0o600)
	if err := testbed.Command(t, bash, "-n", cut).Run(); err == nil {
		t.Error("control: a cut script parses")
	}
	if fish, err := exec.LookPath("fish"); err == nil {
		if out, err := testbed.Command(t, fish, "-n", script("fish")).CombinedOutput(); err != nil {
			t.Errorf("fish -n: %v %s", err, out)
		}
	}
	if man, _ := flowerbin.Output(t, testbed.Command(t, flower, "man"), "man"); !bytes.Contains(man, []byte(".TH flower 1")) {
		t.Errorf("flower man: %.200s", man)
	}
}

// dynamicCompletion: in a real bash, `runs show <TAB>` offers the run ids of
// the run dir named on the line (newest first), `sessions show <TAB>` their
// session ids, and `-C <TAB>` directories, not commands. The control: the
// same line over an empty run dir offers no id.
func dynamicCompletion(t *testing.T, bash, flower, script string) {
	t.Helper()
	ws := t.TempDir()
	runDir := filepath.Join(ws, "runs")
	os.MkdirAll(filepath.Join(ws, "subdir-a"), 0o700)
	for i, id := range []string{"20261201-aaaa", "20261202-bbbb"} {
		row := harness.ManifestRow{Run: id, Workspace: ws, StartedAt: float64(1000 + i),
			Results: []harness.StepResult{{Step: "工作", SessionID: "sess-" + id}}}
		if err := harness.WriteManifestRow(filepath.Join(runDir, "manifest.json"), row); err != nil {
			t.Fatal(err)
		}
	}
	empty := t.TempDir()
	probe := `source "$1"; cd "$2"
COMP_WORDS=(flower runs show --run-dir "$3" ""); COMP_CWORD=5; _flower; echo "${COMPREPLY[*]}"
COMP_WORDS=(flower sessions show --run-dir "$3" sess-20261202); COMP_CWORD=5; _flower; echo "${COMPREPLY[*]}"
COMP_WORDS=(flower -C sub); COMP_CWORD=2; _flower; echo "${COMPREPLY[*]}"
COMP_WORDS=(flower runs show --run-dir "$4" ""); COMP_CWORD=5; _flower; echo "[${COMPREPLY[*]}]"`
	cmd := testbed.Command(t, bash, "-c", probe, "probe", script, ws, runDir, empty)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(flower)+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	want := "20261202-bbbb 20261201-aaaa\nsess-20261202-bbbb\nsubdir-a\n[]\n"
	if err != nil || string(out) != want {
		t.Errorf("dynamic completion: %v\n got %q\nwant %q", err, out, want)
	}
}
