package hooks

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps flower-hook small and static: package hooks and
// cmd/flower-hook may not use cgo, SQLite, or any other package of flower.
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, pkg := range []string{"github.com/flowerhq/flower/hooks", "github.com/flowerhq/flower/cmd/flower-hook"} {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{if .CgoFiles}}cgo{{end}}", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(deps) < 10 {
			t.Fatalf("go list %s listed only %d packages: %s", pkg, len(deps), out)
		}
		for _, line := range deps {
			path, cgo, _ := strings.Cut(line, " ")
			switch {
			case strings.Contains(path, "sqlite"):
				t.Errorf("%s depends on %s", pkg, path)
			case cgo == "cgo" && path != "runtime/cgo" && !strings.HasPrefix(path, "net") && path != "os/user":
				t.Errorf("%s depends on cgo package %s", pkg, path)
			case strings.HasPrefix(path, "github.com/flowerhq/flower/") && path != pkg &&
				path != "github.com/flowerhq/flower/hooks":
				t.Errorf("%s imports flower package %s", pkg, path)
			}
		}
	}
	// And the binary builds with cgo off.
	cmd := exec.Command("go", "build", "-o", t.TempDir()+"/fh", "github.com/flowerhq/flower/cmd/flower-hook")
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("CGO_ENABLED=0 build: %v\n%s", err, out)
	}
}
