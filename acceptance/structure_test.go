package acceptance

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// scenarios are the product scenarios this package holds, one file each
// (X_e2e_test.go): what the file proves across commands.
var scenarios = map[string]string{
	"agentsdk":         "the Agent SDK drives flower claude",
	"authority":        "settings a workspace cannot use to take the guards or the API",
	"cancel":           "signals during a flow",
	"cassette":         "record a flow's model traffic and replay it",
	"example":          "the flows in examples/",
	"fence":            "the write fence in a whole flow",
	"fidelity":         "what a run records",
	"install":          "go install and the plugin delegate",
	"lock":             "one flow per workspace",
	"marketplace":      "the plugin from the marketplace",
	"private":          "file modes and secrets of a step",
	"resume_elsewhere": "resuming a session by id from another path",
	"sandbox":          "the read-only sandbox in a whole flow",
	"secrets":          "no secret on disk or stdout",
	"store":            "a session store shared by two machines",
	"tempclean":        "temporary files on signals",
	"verdict":          "verdicts end to end",
	"view":             "the demo's views at a terminal and in a pipe",
}

// support are the test files that hold no scenario.
var support = []string{"main_test.go", "structure_test.go"}

// TestScenarioFilesAreNamed: every test file here is a declared scenario's
// X_e2e_test.go (so it says what it costs: claude or built binaries) or a
// support file, and every declared scenario has its file. Control: a stray
// name, a scenario in a unit-test file and a scenario without a file are
// found.
func TestScenarioFilesAreNamed(t *testing.T) {
	files, _ := filepath.Glob("*_test.go")
	for _, p := range misnamed(files, scenarios) {
		t.Error(p)
	}
	got := misnamed([]string{"fence_e2e_test.go", "round4_e2e_test.go", "lock_test.go", "main_test.go"}, map[string]string{"fence": "x", "lock": "y", "gone": "z"})
	if len(got) != 4 {
		t.Errorf("control: problems = %q, want the stray round4, the unit-test lock, and lock and gone without their files", got)
	}
}

// misnamed lists how files break the naming of scenarios.
func misnamed(files []string, scenarios map[string]string) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range files {
		if slices.Contains(support, f) {
			continue
		}
		stem, ok := strings.CutSuffix(f, "_e2e_test.go")
		switch {
		case !ok:
			out = append(out, f+": a scenario drives binaries; name it X_e2e_test.go for a scenario X")
		case scenarios[stem] == "":
			out = append(out, f+": no declared scenario "+stem+" (add it to scenarios, saying what it proves)")
		default:
			seen[stem] = true
		}
	}
	for s := range scenarios {
		if !seen[s] {
			out = append(out, "scenario "+s+" has no "+s+"_e2e_test.go")
		}
	}
	return out
}
