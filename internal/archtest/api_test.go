package archtest

import (
	"bytes"
	"flag"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flowerhq/flower/testkit/testbed"
)

// updateAPI rewrites api/flower.txt from the code: go test ./internal/archtest -run TestAPI -update-api
var updateAPI = flag.Bool("update-api", false, "rewrite api/flower.txt from the code")

// apiFile pins the module's public surface, as Go pins its own in
// api/go1.*.txt: every exported name of every package a library user can
// import (not internal/, not commands, not the test wing), one line each.
const apiFile = "api/flower.txt"

// TestAPI fails when the public surface differs from api/flower.txt: an
// export added, removed or changed shows in that file's diff, so it is a
// deliberate change. Regenerate with -update-api.
func TestAPI(t *testing.T) {
	root := testbed.RepoRoot(t)
	got := apiLines(t, root)
	if *updateAPI {
		if err := os.WriteFile(filepath.Join(root, apiFile), []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(filepath.Join(root, apiFile))
	if err != nil {
		t.Fatalf("%v (go test ./internal/archtest -run TestAPI -update-api writes it)", err)
	}
	want := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	for _, l := range got {
		if !slices.Contains(want, l) {
			t.Errorf("new export, not in %s: %s", apiFile, l)
		}
	}
	for _, l := range want {
		if !slices.Contains(got, l) {
			t.Errorf("export gone, still in %s: %s", apiFile, l)
		}
	}
	if t.Failed() {
		t.Log("a deliberate change? go test ./internal/archtest -run TestAPI -update-api")
	}
}

// TestAPIControl: a package with one more export gives one more line.
func TestAPIControl(t *testing.T) {
	src := "package p\n\nfunc Old() {}\n"
	a := declLines("p", parse(t, src))
	b := declLines("p", parse(t, src+"\nfunc New(x int) error { return nil }\n"))
	if len(b) != len(a)+1 || !slices.Contains(b, "p: func New(x int) error") {
		t.Errorf("lines %q → %q", a, b)
	}
}

func parse(t *testing.T, src string) *ast.File {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// publicDir reports whether the package in rel (a folder of the module)
// is one a library user imports.
func publicDir(rel string) bool {
	for _, p := range []string{"internal", "cmd", "testkit", "scripts", "examples", "deploy", "plugin", "docs", "api"} {
		if rel == p || strings.HasPrefix(rel, p+"/") {
			return false
		}
	}
	return true
}

// apiLines lists the exported declarations of every public package.
func apiLines(t *testing.T, root string) []string {
	t.Helper()
	files := map[string][]*ast.File{}
	walkGo(t, false, func(rel string, src []byte) {
		dir := filepath.ToSlash(filepath.Dir(rel))
		if !publicDir(dir) {
			return
		}
		if dir == "." {
			dir = "flower" // the root package
		}
		f, err := parser.ParseFile(token.NewFileSet(), rel, src, parser.SkipObjectResolution)
		if err != nil || f.Name.Name == "main" {
			return
		}
		files[dir] = append(files[dir], f)
	})
	var out []string
	for dir, fs := range files {
		for _, f := range fs {
			out = append(out, declLines(dir, f)...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// declLines are f's exported declarations, each as "pkg: decl" on one line
// (function bodies and comments left out).
func declLines(pkg string, f *ast.File) []string {
	var out []string
	add := func(node any) {
		var b bytes.Buffer
		printer.Fprint(&b, token.NewFileSet(), node)
		out = append(out, pkg+": "+strings.Join(strings.Fields(b.String()), " "))
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || (d.Recv != nil && !exportedRecv(d.Recv)) {
				continue
			}
			add(&ast.FuncDecl{Recv: d.Recv, Name: d.Name, Type: d.Type})
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						add(&ast.GenDecl{Tok: token.TYPE, Specs: []ast.Spec{exportedOnly(s)}})
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							out = append(out, pkg+": "+d.Tok.String()+" "+n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// exportedRecv reports whether a method's receiver type is exported.
func exportedRecv(r *ast.FieldList) bool {
	if len(r.List) == 0 {
		return false
	}
	x := r.List[0].Type
	for {
		switch e := x.(type) {
		case *ast.StarExpr:
			x = e.X
		case *ast.IndexExpr:
			x = e.X
		case *ast.IndexListExpr:
			x = e.X
		case *ast.Ident:
			return e.IsExported()
		default:
			return false
		}
	}
}

// exportedOnly is a type spec with its unexported struct fields and
// interface methods dropped (they are not the surface) and no comments.
func exportedOnly(s *ast.TypeSpec) *ast.TypeSpec {
	c := *s
	c.Doc, c.Comment = nil, nil
	if st, ok := s.Type.(*ast.StructType); ok {
		fields := &ast.FieldList{}
		for _, f := range st.Fields.List {
			if len(f.Names) == 0 || f.Names[0].IsExported() {
				fields.List = append(fields.List, &ast.Field{Names: f.Names, Type: f.Type, Tag: f.Tag})
			}
		}
		c.Type = &ast.StructType{Fields: fields}
	}
	return &c
}
