package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// TestE2E_Runs: a step with a guard denial and a spill shows up in
// `flower runs` and `flower runs show` with both counted.
func TestE2E_Runs(t *testing.T) {
	t.Parallel()
	bed := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main", Replies: []scripted.Reply{
		{ToolUse: &scripted.Block{Name: "Bash", Input: []byte(`{"command":"touch nope","description":"x"}`)}},
		{ToolUse: &scripted.Block{Name: "Read", Input: []byte(`{"file_path":"big.txt"}`)}},
		{Text: "RUNS-OK"},
	}}}})
	if err := os.WriteFile(filepath.Join(bed.Workspace, "big.txt"), bytes.Repeat([]byte("0123456789\n"), 900), 0o644); err != nil {
		t.Fatal(err)
	}
	flower := testbed.BuildBinary(t, "./cmd/flower")
	env := flowerEnv(t, bed.Env(), bed.Claude,
		"FLOWER_RUN_DIR="+filepath.Join(t.TempDir(), "runs"))
	run := func(args ...string) string {
		t.Helper()
		cmd := testbed.Command(t, flower, args...)
		cmd.Env, cmd.Dir = env, bed.Workspace
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("flower %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := run("step", "--workbench", "do it"); !strings.Contains(out, "RUNS-OK") {
		t.Fatalf("step: %s", out)
	}
	list := run("runs")
	if strings.Count(list, "\n") != 2 || !strings.Contains(list, bed.Workspace) {
		t.Fatalf("runs:\n%s", list)
	}
	show := run("runs", "show")
	for _, want := range []string{"guards     1 denial, 1 spill", "plain  true  1         3"} {
		if !strings.Contains(show, want) {
			t.Errorf("runs show lacks %q:\n%s", want, show)
		}
	}
	js := run("runs", "show", "--json")
	if gjson.Get(js, "tally.denials").Int() != 1 || gjson.Get(js, "steps.0.session_id").String() == "" {
		t.Errorf("runs show --json: %s", js)
	}
}
