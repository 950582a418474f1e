package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/flowerhq/flower/testkit/testbed"
)

// maxFuncLines is the longest a non-test function may be, braces included.
const maxFuncLines = 100

// longFuncs lists the functions of the Go source src (named name) longer
// than maxFuncLines.
func longFuncs(t *testing.T, fset *token.FileSet, name string, src []byte) []string {
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		var body *ast.BlockStmt
		what := "func literal"
		switch fn := n.(type) {
		case *ast.FuncDecl:
			body, what = fn.Body, fn.Name.Name
		case *ast.FuncLit:
			body = fn.Body
		}
		if body == nil {
			return true
		}
		start, end := fset.Position(n.Pos()), fset.Position(body.End())
		if lines := end.Line - start.Line + 1; lines > maxFuncLines {
			out = append(out, start.String()+": "+what+" has "+strconv.Itoa(lines)+" lines")
		}
		return true
	})
	return out
}

// TestFunctionLength: no non-test function of the module (functions
// literals included) is over maxFuncLines lines, so each one fits a
// reader's screen.
func TestFunctionLength(t *testing.T) {
	fset := token.NewFileSet()
	if files := walkGo(t, false, func(rel string, src []byte) {
		for _, p := range longFuncs(t, fset, rel, src) {
			t.Error(p)
		}
	}); files < 50 {
		t.Fatalf("walked only %d Go files", files)
	}
}

// walkGo calls fn with every Go file of the module (its path relative to
// the root, and its source), test files too when tests is set, and returns
// how many there were; hidden folders, testdata and node_modules are
// skipped.
func walkGo(t *testing.T, tests bool, fn func(rel string, src []byte)) int {
	t.Helper()
	root := testbed.RepoRoot(t)
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || !tests && strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(root, path)
		fn(rel, src)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestFunctionLength_Control: a function of maxFuncLines+1 lines is caught,
// one of maxFuncLines is not.
func TestFunctionLength_Control(t *testing.T) {
	body := func(lines int) []byte {
		return []byte("package x\n\nfunc f() {\n" + strings.Repeat("\t_ = 0\n", lines-2) + "}\n")
	}
	if got := longFuncs(t, token.NewFileSet(), "long.go", body(maxFuncLines+1)); len(got) != 1 {
		t.Errorf("a %d-line function: %v", maxFuncLines+1, got)
	}
	if got := longFuncs(t, token.NewFileSet(), "ok.go", body(maxFuncLines)); len(got) != 0 {
		t.Errorf("a %d-line function: %v", maxFuncLines, got)
	}
}
