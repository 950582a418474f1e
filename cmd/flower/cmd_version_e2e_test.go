package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/testbed"
)

// A flower built without VCS stamping (-buildvcs=false, as a copied tree or
// a missing git gives) still names its commit when scripts/setup.sh's
// -ldflags -X set it; the control, the same build without them, says
// "unknown commit". setup.sh sets exactly these variables.
func TestE2E_VersionCommitFromLdflags(t *testing.T) {
	flowerbin.SkipShort(t, "it builds flower twice")
	t.Parallel()
	setup, err := os.ReadFile(filepath.Join(testbed.RepoRoot(t), "scripts", "setup.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"-X main.buildCommit=$commit", "-X main.buildModified=true", `-ldflags "$ldflags"`} {
		if !strings.Contains(string(setup), v) {
			t.Errorf("scripts/setup.sh does not pass %s", v)
		}
	}
	const commit = "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		name, ldflags, want string
	}{
		{"stamped by ldflags", "-X main.buildCommit=" + commit + " -X main.buildModified=true", "commit 0123456789ab (modified)"},
		{"control: no ldflags", "", "unknown commit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bin := filepath.Join(t.TempDir(), "flower")
			build := testbed.Command(t, "go", "build", "-buildvcs=false", "-ldflags", tc.ldflags, "-o", bin, "./cmd/flower")
			build.Dir = testbed.RepoRoot(t)
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go build: %v\n%s", err, out)
			}
			out, err := testbed.Command(t, bin, "version").Output()
			if err != nil || !strings.Contains(string(out), tc.want) {
				t.Errorf("flower version = %q (%v), want %q", out, err, tc.want)
			}
		})
	}
}
