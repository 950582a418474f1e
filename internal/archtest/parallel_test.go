package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// deadlineTakers are the testkit helpers (package → names) that take a
// child's deadline when called (testbed.Cap from then on): called before
// t.Parallel(), the deadline runs while the test waits its turn.
var deadlineTakers = map[string]map[string]bool{
	"testbed":   {"Command": true, "Context": true, "Deadline": true},
	"flowerbin": {"Step": true, "StartModel": true, "NewTerminal": true, "NewTerminalSized": true},
}

// earlyDeadlines lists, in the Go test source src (named name), the calls
// of deadlineTakers that a test function or a subtest's function literal
// makes before its t.Parallel().
func earlyDeadlines(t *testing.T, fset *token.FileSet, name string, src []byte) []string {
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		var body *ast.BlockStmt
		switch fn := n.(type) {
		case *ast.FuncDecl:
			body = fn.Body
		case *ast.FuncLit:
			body = fn.Body
		}
		if body == nil {
			return true
		}
		var before []ast.Stmt
		for i, st := range body.List {
			if isParallel(st) {
				before = body.List[:i]
				break
			}
		}
		for _, st := range before {
			ast.Inspect(st, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
						if id, ok := sel.X.(*ast.Ident); ok && deadlineTakers[id.Name][sel.Sel.Name] {
							out = append(out, fset.Position(call.Pos()).String()+": "+id.Name+"."+sel.Sel.Name+" before t.Parallel()")
						}
					}
				}
				return true
			})
		}
		return true
	})
	return out
}

// isParallel reports whether st is a call X.Parallel().
func isParallel(st ast.Stmt) bool {
	es, ok := st.(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Parallel" && len(call.Args) == 0
}

// TestDeadlinesStartAfterParallel: no test takes a child's deadline
// (testbed.Command, Context, Deadline, or a flowerbin helper that does)
// before its t.Parallel(): a parallel test pauses there for its turn, and a
// deadline taken before would run out while it waits (on a full suite a
// test waits minutes).
func TestDeadlinesStartAfterParallel(t *testing.T) {
	fset := token.NewFileSet()
	walkGo(t, true, func(rel string, src []byte) {
		if strings.HasSuffix(rel, "_test.go") {
			for _, p := range earlyDeadlines(t, fset, rel, src) {
				t.Error(p)
			}
		}
	})
}

// TestDeadlinesStartAfterParallel_Control: a Command before t.Parallel() is
// found, in a test and in a subtest; one after it, or in a test that never
// calls t.Parallel(), is not.
func TestDeadlinesStartAfterParallel_Control(t *testing.T) {
	src := `package x
func TestEarly(t *testing.T) { c := testbed.Command(t, "x"); t.Parallel(); c.Run() }
func TestSub(t *testing.T) { t.Run("a", func(t *testing.T) { flowerbin.StartModel(t, "f", nil); t.Parallel() }) }
func TestLate(t *testing.T) { t.Parallel(); testbed.Command(t, "x").Run() }
func TestSerial(t *testing.T) { testbed.Command(t, "x").Run() }
`
	if got := earlyDeadlines(t, token.NewFileSet(), "x_test.go", []byte(src)); len(got) != 2 {
		t.Errorf("found %q, want the early Command and the subtest's StartModel", got)
	}
}
