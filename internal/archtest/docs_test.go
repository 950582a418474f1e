package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// maxREADME is the front door's size: what flower is, set-up, the ways to
// use it, exit codes and links; reference material lives in docs/.
const maxREADME = 15 << 10

var mdLink = regexp.MustCompile(`\]\(([^)#]+)(#[^)]*)?\)`)

// TestREADMEIsAFrontDoor keeps README.md within maxREADME, every relative
// link of README.md and docs/*.md pointing at a file that exists, and no
// machine path (a checkout's absolute path) in any of them.
func TestREADMEIsAFrontDoor(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(readme) > maxREADME {
		t.Errorf("README.md is %d bytes, more than %d: move reference material to docs/", len(readme), maxREADME)
	}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if len(docs) == 0 {
		t.Fatal("no docs/*.md")
	}
	for _, f := range append([]string{filepath.Join(root, "README.md")}, docs...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problemsOf(string(data), filepath.Dir(f)) {
			t.Errorf("%s: %s", f, p)
		}
	}
}

// problemsOf lists the broken relative links and machine paths of one
// Markdown file in dir.
func problemsOf(text, dir string) []string {
	var out []string
	for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
		target := m[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, target)); err != nil {
			out = append(out, "broken link "+target)
		}
	}
	for _, p := range []string{"/work/", "../shared/", "/root/", "/home/"} {
		if strings.Contains(text, p) {
			out = append(out, "machine path "+p)
		}
	}
	return out
}

// Control: the checks find a broken link and a machine path.
func TestREADMEIsAFrontDoor_Control(t *testing.T) {
	got := problemsOf("see [x](no-such-file.md) and [y](docs_test.go) in /work/main", ".")
	if len(got) != 2 || !strings.Contains(got[0], "no-such-file.md") || !strings.Contains(got[1], "/work/") {
		t.Fatalf("problems = %v, want the broken link and the machine path", got)
	}
}
