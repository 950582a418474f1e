package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/internal/demo"
	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/testbed"
)

// TestE2E_Demo: `flower demo` runs the whole starter flow offline and shows
// every promised moment: a question answered, the goal, a denied direct edit
// by the coordinator, a delegation, a spill, a rejection, then success.
func TestE2E_Demo(t *testing.T) {
	t.Parallel()
	claude := testbed.ClaudePath(t)
	flower := testbed.BuildBinary(t, "./cmd/flower")
	cmd := testbed.Command(t, flower, "demo", "--json", "--keep")
	env := flowerbin.Env(t, os.Environ(), claude)
	cmd.Env = append(env, "TMPDIR="+t.TempDir())
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

	// Without --keep the demo leaves no temporary folder behind.
	tmp := t.TempDir()
	cmd = testbed.Command(t, flower, "demo", "--json")
	cmd.Env = append(env, "TMPDIR="+tmp)
	if out, err := cmd.Output(); err != nil || !gjson.Get(flowerbin.LastLine(out), "ok").Bool() {
		t.Fatalf("demo without --keep: %v\n%s", err, flowerbin.Tail(out))
	}
	// (claude keeps its own sockets in TMPDIR; the demo's folder is flower-demo-*.)
	if left, _ := filepath.Glob(filepath.Join(tmp, "flower-demo-*")); len(left) != 0 {
		t.Errorf("demo left %v in TMPDIR", left)
	}
}
