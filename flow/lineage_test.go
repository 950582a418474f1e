package flow

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLineage_DamagedFileMovedAside: a garbled lineage.json does not stop
// the lineage: the next Remember moves it aside (lineage.json.corrupt-…)
// and starts a fresh file, which then remembers. Control: an intact file
// keeps its history and nothing is moved.
func TestLineage_DamagedFileMovedAside(t *testing.T) {
	for _, garbled := range []bool{true, false} {
		t.Run(map[bool]string{true: "garbled", false: "control"}[garbled], func(t *testing.T) {
			dir := t.TempDir()
			l := NewLineage(dir, dir, "wf")
			if err := l.Remember("work", "s-old"); err != nil {
				t.Fatal(err)
			}
			if garbled {
				os.WriteFile(l.Path, []byte(`{"workspaces": {"x": [1, 2`), 0o600)
			}
			if err := l.Remember("work", "s-new"); err != nil {
				t.Fatalf("Remember on a %s file: %v", map[bool]string{true: "garbled", false: "sound"}[garbled], err)
			}
			aside, _ := filepath.Glob(l.Path + ".corrupt-*")
			want := []string{"s-old", "s-new"}
			if garbled {
				want = []string{"s-new"}
			}
			got := l.History("work")
			if len(aside) != map[bool]int{true: 1, false: 0}[garbled] || len(got) != len(want) || got[len(got)-1] != "s-new" {
				t.Fatalf("history %v (want %v), aside %v", got, want, aside)
			}
		})
	}
}
