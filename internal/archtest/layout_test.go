package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

// pkgImports is `go list` of every package of the module (tests included):
// its import path and what it and its tests import.
func pkgImports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}} {{join .TestImports \" \"}} {{join .XTestImports \" \"}}|{{join .Imports \" \"}}", mod+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.SplitN(line, "|", 3)
		if len(parts) != 3 {
			t.Fatalf("go list: odd line %q", line)
		}
		m[parts[0]] = strings.Fields(parts[2])
		m[parts[0]+" (tests)"] = strings.Fields(parts[1])
	}
	if len(m) < 20 {
		t.Fatalf("go list listed only %d packages", len(m))
	}
	return m
}

// layoutProblems checks the house's floors: a package under internal/
// imports nothing of this module but other internal packages; the root package flower (the composition) is
// imported only by commands and tests; the test wing testkit/ only by tests
// and scripts.
func layoutProblems(imports map[string][]string) []string {
	var out []string
	for pkg, imps := range imports {
		tests := strings.HasSuffix(pkg, " (tests)")
		p := strings.TrimSuffix(pkg, " (tests)")
		for _, imp := range imps {
			if !strings.HasPrefix(imp, mod) && imp != root {
				continue
			}
			switch {
			case !tests && strings.HasPrefix(p, mod+"internal/") && !strings.HasPrefix(imp, mod+"internal/"):
				out = append(out, p+" (under internal/) imports "+imp+" (internal packages import only internal ones)")
			case !tests && imp == root && !strings.HasPrefix(p, mod+"cmd/"):
				out = append(out, p+" imports the root package flower, the composition (only commands and tests may)")
			case !tests && strings.HasPrefix(imp, mod+"testkit/") && !strings.HasPrefix(p, mod+"testkit/") && !strings.HasPrefix(p, mod+"scripts/"):
				out = append(out, p+" imports the test wing "+imp)
			}
		}
	}
	return out
}

// TestLayout holds the floors (see layoutProblems).
func TestLayout(t *testing.T) {
	for _, p := range layoutProblems(pkgImports(t)) {
		t.Error(p)
	}
}

// Control: a leaf that imports a package of ours, a library that imports
// the root package and one that imports the test wing are each found; the same
// imports from tests are not.
func TestLayout_Control(t *testing.T) {
	got := layoutProblems(map[string][]string{
		mod + "internal/x":           {mod + "harness"},
		mod + "flow":                 {root},
		mod + "harness":              {mod + "testkit/testbed"},
		mod + "harness (tests)":      {mod + "testkit/testbed", root},
		mod + "cmd/flower":           {root},
		mod + "scripts/recordshapes": {mod + "testkit/testbed"},
	})
	if len(got) != 3 {
		t.Fatalf("problems = %v, want the leaf, the root package import and the test-wing import", got)
	}
}
