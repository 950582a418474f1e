package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandsBuildTheirOwnFlags holds cmd/flower to its structure: no
// init() registers anything and no package-level variable holds a flag or
// a command, so every NewApp builds fresh flags into fresh options.
func TestCommandsBuildTheirOwnFlags(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	var checked int
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		for _, bad := range sharedState(t, f, nil) {
			t.Errorf("%s: %s", f, bad)
		}
		checked++
	}
	// Control: the check finds both kinds of shared state when present.
	src := "package main\nimport \"github.com/urfave/cli/v2\"\nvar flagX = &cli.BoolFlag{Name: \"x\"}\nvar cmds []*cli.Command\nfunc init() {}\n"
	if got := sharedState(t, "control.go", []byte(src)); len(got) != 3 || checked == 0 {
		t.Errorf("control: found %v in %d files", got, checked)
	}
}

// sharedState lists the init functions and package-level flag or command
// variables of one file.
func sharedState(t *testing.T, name string, src []byte) []string {
	t.Helper()
	f := parseFile(t, name, src)
	var out []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.Name == "init" && d.Recv == nil {
				out = append(out, "func init()")
			}
		case *ast.GenDecl:
			if d.Tok != token.VAR {
				continue
			}
			for _, sp := range d.Specs {
				vs := sp.(*ast.ValueSpec)
				text := exprText(vs.Type)
				for _, v := range vs.Values {
					text += " " + exprText(v)
				}
				if strings.Contains(text, "cli.") && (strings.Contains(text, "Flag") || strings.Contains(text, "Command")) {
					out = append(out, "package-level "+vs.Names[0].Name)
				}
			}
		}
	}
	return out
}

// exprText is a rough rendering of an expression: enough to see which cli
// types it names.
func exprText(e ast.Expr) string {
	if e == nil {
		return ""
	}
	var sb strings.Builder
	ast.Inspect(e, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				sb.WriteString(id.Name + "." + sel.Sel.Name + " ")
			}
		}
		return true
	})
	return sb.String()
}

// testTopics are the test files' names that pair with no source file: what
// they test crosses commands. Every other X_test.go and X_e2e_test.go
// pairs with X.go (cmd_tell.go, cmd_tell_test.go, cmd_tell_e2e_test.go).
// A product scenario that crosses commands is no topic here: it goes to
// acceptance/, named for the scenario.
var testTopics = map[string]string{
	"cli":           "flags anywhere, words that are no asks",
	"deploy":        "the Kubernetes templates",
	"deploy_worker": "the worker deployment",
	"fleet":         "queue and worker across machines",
	"outage":        "the database away under running workers",
	"structure":     "this file",
}

// TestTestFilesPairWithTheirSource: every test file's name is a source
// file's (X_test.go, X_e2e_test.go for X.go) or a declared topic.
// Control: a stray name is found.
func TestTestFilesPairWithTheirSource(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	for _, bad := range unpaired(files) {
		t.Errorf("%s pairs with no source file and no declared topic (name it for the file it tests, or add a topic)", bad)
	}
	if got := unpaired([]string{"cmd_tell.go", "cmd_tell_test.go", "cmd_tell_e2e_test.go", "tell_test.go", "fleet_e2e_test.go"}); len(got) != 1 || got[0] != "tell_test.go" {
		t.Errorf("control: unpaired = %v, want [tell_test.go]", got)
	}
}

// unpaired lists the test files among files that pair with nothing.
func unpaired(files []string) []string {
	src := map[string]bool{}
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			src[strings.TrimSuffix(f, ".go")] = true
		}
	}
	var out []string
	for _, f := range files {
		stem, ok := strings.CutSuffix(f, "_test.go")
		if !ok {
			continue
		}
		stem = strings.TrimSuffix(stem, "_e2e")
		if !src[stem] && testTopics[stem] == "" {
			out = append(out, f)
		}
	}
	return out
}

// e2eOnly are the testkit helpers (package → names) that start claude, a
// scripted model or a built binary: only *_e2e_test.go files may call them
// (or the helpers declared there). flowerbin's script helpers (Tool,
// TypedGoal, DemoBrief…) are plain values and free for unit tests.
var e2eOnly = map[string]map[string]bool{
	"testbed":   {"ClaudePath": true, "New": true, "NewFor": true, "BuildBinary": true, "Command": true, "Exec": true, "Start": true, "RequireTool": true},
	"flowerbin": {"Flower": true, "Hook": true, "Env": true, "Step": true, "Output": true, "StartModel": true, "NewTerminal": true, "NewTerminalSized": true, "MarkSelfTested": true},
}

// TestUnitTestsStartNothing: a test file that is not *_e2e_test.go calls
// no testbed helper that starts claude or a binary, and no helper an e2e
// file declares, so the unit loop (-short) runs in process. Control: a file
// calling testbed.New and an e2e helper is caught.
func TestUnitTestsStartNothing(t *testing.T) {
	files, _ := filepath.Glob("*_test.go")
	e2eFuncs := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_e2e_test.go") {
			for _, d := range parseFile(t, f, nil).Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
					e2eFuncs[fd.Name.Name] = true
				}
			}
		}
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_e2e_test.go") {
			continue
		}
		for _, bad := range startsSomething(parseFile(t, f, nil), e2eFuncs) {
			t.Errorf("%s calls %s: move the test into a *_e2e_test.go file", f, bad)
		}
	}
	ctl := parseFile(t, "control_test.go", []byte("package main\nfunc TestX(t *testing.T) { testbed.New(t, nil); flowerbin.Env(t, nil, \"\"); tellBed(t); testbed.RepoRoot(t); flowerbin.TypedGoal(\"\") }\n"))
	if got := startsSomething(ctl, map[string]bool{"tellBed": true}); len(got) != 3 {
		t.Errorf("control: found %v, want testbed.New, flowerbin.Env and tellBed", got)
	}
}

// startsSomething lists the calls in f of e2eOnly testkit helpers and of
// the functions in e2eFuncs.
func startsSomething(f *ast.File, e2eFuncs map[string]bool) []string {
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		switch fn := call.Fun.(type) {
		case *ast.SelectorExpr:
			if id, ok := fn.X.(*ast.Ident); ok && e2eOnly[id.Name][fn.Sel.Name] {
				out = append(out, id.Name+"."+fn.Sel.Name)
			}
		case *ast.Ident:
			if e2eFuncs[fn.Name] {
				out = append(out, fn.Name)
			}
		}
		return true
	})
	return out
}

func parseFile(t *testing.T, name string, src []byte) *ast.File {
	t.Helper()
	var s any
	if src != nil {
		s = src
	}
	f, err := parser.ParseFile(token.NewFileSet(), name, s, 0)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
