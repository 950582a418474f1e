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
	var s any
	if src != nil {
		s = src
	}
	f, err := parser.ParseFile(token.NewFileSet(), name, s, 0)
	if err != nil {
		t.Fatal(err)
	}
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
