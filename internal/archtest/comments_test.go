package archtest

import (
	"go/parser"
	"go/token"
	"regexp"
	"strings"
	"testing"
)

// pointer is a comment that points at a document the repository does not
// hold instead of stating the rule: the specification the code was ported
// from (its name for it is "seed") or a design document. docs/seed-map.md is the
// one place that maps the specification's names to Go.
var pointer = regexp.MustCompile(`(?i)\bthe seed\b|\bseed's\b|\bseeds/|design\.md|design §`)

// pointerComments lists the comments of the Go source src (named name) that
// match pointer.
func pointerComments(t *testing.T, fset *token.FileSet, name string, src []byte) []string {
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	var out []string
	for _, g := range f.Comments {
		for _, c := range g.List {
			if m := pointer.FindString(c.Text); m != "" {
				out = append(out, fset.Position(c.Pos()).String()+": "+strings.TrimSpace(c.Text))
			}
		}
	}
	return out
}

// TestCommentsStandAlone: no comment in the module's Go files (tests
// included) cites the specification or a design document in place of the
// rule itself.
func TestCommentsStandAlone(t *testing.T) {
	fset := token.NewFileSet()
	if files := walkGo(t, true, func(rel string, src []byte) {
		for _, p := range pointerComments(t, fset, rel, src) {
			t.Error(p)
		}
	}); files < 100 {
		t.Fatalf("walked only %d Go files", files)
	}
}

// TestCommentsStandAlone_Control: a comment citing the specification or the
// design document by name is caught; the same words in a string, and "seeded" or a fuzz seed corpus,
// are not.
func TestCommentsStandAlone_Control(t *testing.T) {
	src := "package x\n\n// DefaultTimeout is the seed's timeout_s.\nconst a = 1\n\n/* see design.md §3 */\nconst b = 2\n\n" +
		"// the fuzz test's seed corpus, a seeded generator\nconst c = \"the seed's\"\n"
	got := pointerComments(t, token.NewFileSet(), "x.go", []byte(src))
	if len(got) != 2 || !strings.Contains(got[0], "x.go:3") || !strings.Contains(got[1], "x.go:6") {
		t.Fatalf("pointerComments = %q, want lines 3 and 6", got)
	}
}
