package fleet

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/sessionstore"
)

// TestDocumentsKeepTheFrozenGoal: the store keeps the goal freeze was
// given, never the goal file (an agent's Bash can rewrite it); the control,
// no freeze, keeps no goal at all although the file is there. StoredBrief
// sees a complete brief only; Restore brings both into an empty workspace
// (0600) and HasFrozenGoal says so.
func TestDocumentsKeepTheFrozenGoal(t *testing.T) {
	ctx := context.Background()
	st, err := sessionstore.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	docsIn := func(ws, name string) *Documents {
		return NewDocuments(st, name, harness.NewWorkbench(ws), flow.NewLineage(filepath.Join(ws, "runs"), ws, flow.StarterName))
	}
	a := t.TempDir()
	notes := harness.NewWorkbench(a).Notes()
	os.MkdirAll(notes, 0o700)
	os.WriteFile(filepath.Join(notes, flow.DefaultGoalName), []byte("FORGED"), 0o600)
	os.WriteFile(filepath.Join(notes, flow.DefaultBriefName), []byte("## 目标\ng\n## 验收标准\na\n## 边界\nb\n## 未知与假设\nu\n"), 0o600)
	for _, tc := range []struct {
		name, frozen string
	}{{"control", ""}, {"frozen", "## 目标\nREAL"}} {
		d := docsIn(a, tc.name)
		if tc.frozen != "" {
			d.freeze(tc.frozen)
		}
		if err := d.save(ctx); err != nil {
			t.Fatal(err)
		}
		if ok, err := d.StoredBrief(ctx); !ok || err != nil {
			t.Errorf("%s: stored brief %v %v", tc.name, ok, err)
		}
		b := t.TempDir()
		db := docsIn(b, tc.name)
		if _, err := db.Restore(ctx); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(harness.NewWorkbench(b).Notes(), flow.DefaultGoalName))
		switch {
		case tc.frozen == "" && (err == nil || db.HasFrozenGoal()):
			t.Errorf("control: the goal file %q travelled without a Freeze", got)
		case tc.frozen != "" && (string(got) != tc.frozen || !db.HasFrozenGoal()):
			t.Errorf("restored goal %q (%v), want the frozen %q", got, err, tc.frozen)
		}
		if info, err := os.Stat(filepath.Join(harness.NewWorkbench(b).Notes(), flow.DefaultBriefName)); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: restored brief %v %v", tc.name, info, err)
		}
	}
	if ok, _ := docsIn(a, "none").StoredBrief(ctx); ok {
		t.Error("a flow with no documents has a stored brief")
	}
}
