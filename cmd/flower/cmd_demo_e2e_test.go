package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowerhq/flower/internal/demo"
	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/testbed"
)

// TestE2E_Demo: `flower demo` runs the whole starter flow offline and shows
// every promised moment: a question answered, the goal, a denied direct edit
// by the coordinator, a delegation, a spill, a rejection, then success; with
// --keep its folder stays (TestE2E_DemoPipedForPeople shows that without
// --keep none is left: one demo run each, six claude processes a run).
func TestE2E_Demo(t *testing.T) {
	t.Parallel()
	claude := testbed.ClaudePath(t)
	flower := testbed.BuildBinary(t, "./cmd/flower")
	cmd := testbed.Command(t, flower, "demo", "--json", "--keep")
	tmp := t.TempDir()
	cmd.Env = append(flowerbin.Env(t, os.Environ(), claude), "TMPDIR="+tmp)
	out, stderr := flowerbin.Output(t, cmd, "demo")
	lines := schemaLines(t, out, "demo --json")
	final := lines[len(lines)-1]
	if final.Get("kind").String() != "flow_result" || !final.Get("ok").Bool() || final.Get("verdict").String() != "achieved" {
		t.Fatalf("last line: %s", final.Raw)
	}
	if !strings.Contains(stderr, "the clarifier asks") {
		t.Errorf("the question was not shown: %s", stderr)
	}
	var mainDenied, subWrote, spilled bool
	var verdicts []string
	for _, l := range lines {
		d := l.Get("data")
		switch l.Get("kind").String() {
		case "guard":
			main := d.Get("agent_id").String() == ""
			mainDenied = mainDenied || (main && d.Get("decision").String() == "deny" && d.Get("tool").String() == "Write")
			subWrote = subWrote || (!main && d.Get("guard").String() == "delegate" && d.Get("tool").String() == "Write" && d.Get("decision").String() == "pass")
			spilled = spilled || (d.Get("guard").String() == "spill" && d.Get("decision").String() == "rewrite")
		case "assistant":
			if strings.Contains(l.Get("step").String(), "评审") {
				verdicts = append(verdicts, d.Get("text").String())
			}
		}
	}
	if !mainDenied || !subWrote || !spilled {
		t.Errorf("denied direct edit %v, delegated write %v, spill %v", mainDenied, subWrote, spilled)
	}
	if len(verdicts) != 2 || !strings.Contains(verdicts[0], "未达成") || !strings.Contains(verdicts[1], "已达成") {
		t.Errorf("judge verdicts: %q", verdicts)
	}
	ws := filepath.Dir(final.Get("workbench").String())
	if b, _ := os.ReadFile(filepath.Join(ws, "hello.txt")); string(b) != demo.Answer+"\n" {
		t.Errorf("hello.txt = %q", b)
	}
	spills, _ := filepath.Glob(filepath.Join(final.Get("workbench").String(), "spill", "*.txt"))
	if len(spills) == 0 {
		t.Error("no spill file on disk")
	}
	for _, p := range []string{final.Get("brief").String(), final.Get("goal").String()} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("missing %s", p)
		}
	}
	// The control of TestE2E_DemoPipedForPeople's clean TMPDIR: --keep
	// keeps the demo's folder there.
	if kept, _ := filepath.Glob(filepath.Join(tmp, "flower-demo-*")); len(kept) != 1 {
		t.Errorf("demo --keep left %v in TMPDIR, want its one folder", kept)
	}
}
