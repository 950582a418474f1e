package hooks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Spill never writes through a symlinked spill folder or a planted
// symlink file: the original output stands and the decision says why. The
// control (a real spill folder) spills, so the test can fail.
func TestSpillStaysInItsFolder(t *testing.T) {
	re, _ := toolMatcher(BulkyTools)
	big := strings.Repeat("q", 5000)
	in := Input{ToolName: "Bash", ToolInput: bashInput("ls"), ToolResponse: json.RawMessage(`{"stdout":"` + big + `"}`)}
	cases := []struct {
		name  string
		setup func(t *testing.T, root, outside string)
		ok    bool
	}{
		{"control: real folder", func(*testing.T, string, string) {}, true},
		{"spill folder links outside", func(t *testing.T, root, outside string) {
			must(t, os.Symlink(outside, filepath.Join(root, "spill")))
		}, false},
		{"spill folder links inside", func(t *testing.T, root, _ string) {
			must(t, os.Mkdir(filepath.Join(root, "elsewhere"), 0o700))
			must(t, os.Symlink(filepath.Join(root, "elsewhere"), filepath.Join(root, "spill")))
		}, false},
		{"spill file is a planted link", func(t *testing.T, root, outside string) {
			must(t, os.Mkdir(filepath.Join(root, "spill"), 0o700))
			must(t, os.Symlink(filepath.Join(outside, "x.txt"), filepath.Join(root, "spill", SpillName(big)+".txt")))
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, outside := t.TempDir(), t.TempDir()
			c.setup(t, root, outside)
			d := Spill(in, SpillConfig{Dir: root, Tools: re})
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Errorf("wrote outside the workbench: %v", entries)
			}
			if c.ok {
				if d.Verdict != Rewrite {
					t.Errorf("control did not spill: %+v", d)
				}
				return
			}
			if d.Verdict != Pass || d.UpdatedToolOutput != nil || !strings.Contains(d.Detail["error"].(string), "symlink") {
				t.Errorf("verdict %s detail %v, want pass with a symlink error", d.Verdict, d.Detail)
			}
		})
	}
}

// RefreshIndex refuses an INDEX.md that is a symlink (it would rewrite or
// read the file it points to); the control (a regular INDEX.md) is
// refreshed.
func TestRefreshIndexStaysInItsFolder(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "victim.md")
	must(t, os.WriteFile(target, []byte("keep me\n"), 0o600))
	must(t, os.Symlink(target, filepath.Join(root, IndexFile)))
	err := RefreshIndex(root, 0)
	if err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("RefreshIndex through a symlink: %v, want a symlink error", err)
	}
	if data, _ := os.ReadFile(target); string(data) != "keep me\n" {
		t.Errorf("the link target changed: %q", data)
	}
	if st, _ := os.Lstat(filepath.Join(root, IndexFile)); st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced")
	}
	// Control: a regular INDEX.md is rewritten.
	root2 := t.TempDir()
	must(t, os.WriteFile(filepath.Join(root2, IndexFile), []byte("old\n"), 0o600))
	if err := RefreshIndex(root2, 0); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(root2, IndexFile)); !strings.HasPrefix(string(data), indexTitle+"\n") {
		t.Errorf("control not refreshed: %q", data)
	}
	// The index guard reports the refusal and passes.
	d := Index(Input{ToolName: "Write", ToolInput: json.RawMessage(`{"file_path":"` + filepath.Join(root, "notes", "n.md") + `"}`)}, root, 0)
	if d.Verdict != Pass || d.Detail["error"] == nil {
		t.Errorf("index guard: %+v, want pass with the error", d)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
