package flow_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/testkit/testbed"
)

// TestE2EWakeAfterStoreDamage: garbage in sessions.db between a starter
// flow and its wake does not stop the wake: the store is moved aside, the
// steps whose sessions it held start fresh, and the flow succeeds with the
// brief (the first sentence kept, the new one added) and a goal re-derived
// from it. TestE2EStarterFlowAndWake is the control (the same wake on an
// intact store resumes the sessions).
func TestE2EWakeAfterStoreDamage(t *testing.T) {
	t.Parallel()
	bed, _, o := starterBed(t, []string{e2eAchieve, e2eAchieve}, []string{e2eGoal, e2eGoal2})
	runDir := o.RunDir
	run := func(sentence string) {
		t.Helper()
		wf, err := flow.StarterFlow(sentence, o)
		if err != nil {
			t.Fatal(err)
		}
		defer wf.Close()
		rt := newRuntime(t, bed, runDir, wf.Workbench)
		c := runFlow(t, wf, rt)
		rt.Close()
		if err := c.Outcome(); err != nil {
			t.Fatalf("outcome of %q: %v", sentence, err)
		}
	}
	run("帮我写个 hello.txt")
	db := filepath.Join(runDir, "sessions.db")
	testbed.GarblePages(t, db, "hello.txt")
	os.RemoveAll(filepath.Join(runDir, "claude-config", "projects"))
	run("还要支持乘法")
	if aside, _ := filepath.Glob(db + ".corrupt-*"); len(aside) != 1 {
		t.Errorf("the damaged store was not moved aside: %v", aside)
	}
	notes := filepath.Join(runDir, "workbench", "notes")
	if _, err := os.Stat(notes); err != nil {
		notes = filepath.Join(bed.Workspace, ".flower", "notes")
	}
	b, err := flow.LoadBrief(filepath.Join(notes, "需求.md"))
	if err != nil || !b.Complete() || !strings.Contains(b.Goal, "还要支持乘法") {
		t.Errorf("brief after the wake: %+v %v", b, err)
	}
	if g, _ := flow.LoadGoal(filepath.Join(notes, "目标.md")); !strings.Contains(g.Statement, "支持乘法") {
		t.Errorf("the goal was not re-derived: %+v", g)
	}
}
