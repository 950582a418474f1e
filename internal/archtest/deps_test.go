package archtest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/flowerhq/flower/testkit/testbed"
)

const mod = "github.com/flowerhq/flower/"

// root is the module's root package, flower: the composition (flower.New).
const root = "github.com/flowerhq/flower"

// glance is the leaf package of the shell classifier that hooks and
// sessionstore share; it imports nothing of ours.
const glance = mod + "glance"

// redact is the leaf that keeps credentials out of files; flower-hook uses
// it for spill files.
const redact = mod + "internal/redact"

// textclip is the leaf that cuts text; flower-hook uses it for previews.
const textclip = mod + "internal/textclip"

// lazyre is the leaf that compiles a pattern on first use; flower-hook uses
// it for spill names.
const lazyre = mod + "internal/lazyre"

// atomicfile is the leaf that replaces files durably; flower-hook uses it
// for spill files and the workbench index.
const atomicfile = mod + "internal/atomicfile"

// child starts flower's children and is the step supervisor flower-hook
// becomes; it imports nothing of ours.
const child = mod + "internal/child"

// leaves are the small shared packages that import nothing of ours, so any
// layer (the static flower-hook included) may use them.
var leaves = []string{hooklite, glance, textclip, atomicfile, redact, lazyre, mod + "internal/envlist", mod + "internal/pinned", mod + "internal/linesock", mod + "internal/login", mod + "internal/demo", mod + "internal/await", mod + "internal/selftestmark"}

// pkgInfo is one line of `go list -deps`: a package, whether it has cgo
// files, and its direct imports.
type pkgInfo struct {
	path    string
	cgo     bool
	imports []string
}

// deps lists pkg and everything it links (tests excluded).
func deps(t *testing.T, pkg string) []pkgInfo {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}|{{if .CgoFiles}}cgo{{end}}|{{join .Imports \" \"}}", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", pkg, err, out)
	}
	var infos []pkgInfo
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.SplitN(line, "|", 3)
		if len(parts) != 3 {
			t.Fatalf("go list %s: odd line %q", pkg, line)
		}
		infos = append(infos, pkgInfo{path: parts[0], cgo: parts[1] == "cgo", imports: strings.Fields(parts[2])})
	}
	if len(infos) < 10 {
		t.Fatalf("go list %s listed only %d packages: %s", pkg, len(infos), out)
	}
	return infos
}

// rule is what one package may not link.
type rule struct {
	pkg string
	// noCgo forbids cgo packages (the net/os-user stubs of the standard
	// library aside) and anything with sqlite in its path.
	noCgo bool
	// ours lists the packages of this module pkg may link; nil allows all
	// but forbid.
	ours []string
	// forbid lists packages pkg may not link at all.
	forbid []string
	// forbidDirect lists packages pkg itself may not import.
	forbidDirect []string
}

// hookForbid is what flower-hook may not link: each costs every start
// (gjson builds its modifier table and brings tidwall/pretty's:
// hooks/wirefast.go splits the input itself; redact's rule files reach it
// as Go values, not through a TOML parser).
var hookForbid = []string{"net", "crypto/sha256", "crypto/internal/fips140",
	"github.com/tidwall/gjson", "github.com/tidwall/pretty", "github.com/pelletier/go-toml/v2"}

// hooklite is the leaf behind flower-hook-lite, the PreToolUse guards'
// front (it asks the flower process, else execs flower-hook).
const hooklite = mod + "internal/hooklite"

// liteForbid is what flower-hook-lite may not link: it exists to start as
// the floor hook does (package syscall only), so none of what flower-hook's
// start pays for — the shell parser and its init-time regexps, regexp and
// unicode's tables, encoding/json, reflect, os, flag, time and godebug,
// golang.org/x/sys (which brings most of those).
var liteForbid = append(slices.Clone(hookForbid), "mvdan.cc/sh/v3/syntax", "mvdan.cc/sh/v3/expand", "mvdan.cc/sh/v3/fileutil",
	"regexp", "regexp/syntax", "unicode", "encoding/json", "reflect", "os", "flag", "time", "internal/godebug", "golang.org/x/sys/unix")

var rules = []rule{
	// flower-hook-lite starts for every PreToolUse guard call of a step:
	// package syscall and its leaf only.
	{pkg: mod + "cmd/flower-hook-lite", noCgo: true, ours: []string{mod + "cmd/flower-hook-lite", hooklite}, forbid: liteForbid},
	// flower-hook runs on every tool call: package net's initialisation
	// would cost each one (its sockets are plain syscalls on Unix), and so
	// would crypto/sha256's (the FIPS 140 module it brings: spill names
	// are FNV-1a).
	{pkg: mod + "hooks", noCgo: true, ours: []string{mod + "hooks", glance, redact, textclip, atomicfile, lazyre, hooklite}, forbid: hookForbid},
	{pkg: mod + "cmd/flower-hook", noCgo: true, ours: []string{mod + "cmd/flower-hook", mod + "hooks", glance, redact, textclip, atomicfile, lazyre, child, hooklite}, forbid: hookForbid},
	// child (the supervisor flower-hook becomes for a step) is a leaf.
	{pkg: child, noCgo: true, ours: []string{child}},
	// The small shared leaves import nothing of ours.
	{pkg: redact, ours: []string{redact}},
	{pkg: atomicfile, ours: []string{atomicfile}},
	{pkg: mod + "harness", forbid: []string{"github.com/mattn/go-sqlite3", "github.com/jackc/pgx/v5", "github.com/jackc/pgx/v5/stdlib", mod + "sessionstore", mod + "scripted"}},
	// flow is what a library user links to run workflows: no SQLite, no
	// PostgreSQL driver, and no MCP SDK (which brings net/http, TLS and
	// oauth2): only the hidden `flower mcp-channel` command serves MCP.
	{pkg: mod + "flow", forbid: []string{"github.com/mattn/go-sqlite3", "github.com/jackc/pgx/v5", "github.com/jackc/pgx/v5/stdlib", "github.com/modelcontextprotocol/go-sdk/mcp", mod + "sessionstore", mod + "scripted"}, forbidDirect: []string{"os/exec"}},
	{pkg: glance, noCgo: true, ours: []string{glance}},
	// The root package (the composition) is linked by library users for
	// the default store: not the scripted model, not the workflow layer
	// above it.
	{pkg: root, forbid: []string{mod + "scripted", mod + "flow", mod + "testkit/testbed"}},
	// fleet (the queue and its workers) sits above flow, beside the command:
	// never the scripted model or the test bed.
	{pkg: mod + "fleet", forbid: []string{mod + "scripted", mod + "testkit/testbed", mod + "testkit/pgtest"}},
	// webui (flower ui's pages) sits beside the command, above fleet: it
	// reads what the layers below record; never the scripted model, the
	// test wing or the composition (the root package).
	{pkg: mod + "webui", forbid: []string{mod + "scripted", mod + "testkit/testbed", mod + "testkit/pgtest", root, mod + "cmd/flower"}},
	// testbed is the test wing's floor: the layers' own tests (package
	// flow's, harness's, hooks') use it, so it links none of them; what
	// drives the flower binaries and scripts flows (flow's typed goals) is
	// testkit/flowerbin, which only cmd/flower's and acceptance's tests use.
	{pkg: mod + "testkit/testbed", forbid: []string{mod + "flow", mod + "harness", mod + "hooks", mod + "sessionstore", mod + "fleet", mod + "testkit/flowerbin"}},
	{pkg: mod + "sessionstore", forbid: []string{mod + "harness", mod + "flow", mod + "scripted", mod + "hooks"}},
}

// TestDependencies keeps every layer to what it uses: flower-hook small and
// static, the libraries (harness, flow) free of the SQLite driver and the
// scripted model, flow spawning nothing itself, sessionstore beside
// harness rather than on top of hooks.
func TestDependencies(t *testing.T) {
	for _, r := range rules {
		t.Run(strings.TrimPrefix(r.pkg, mod), func(t *testing.T) {
			for _, p := range problems(r, deps(t, r.pkg)) {
				t.Error(p)
			}
		})
	}
	// And flower-hook and flower-hook-lite build with cgo off, as
	// setup.sh builds them.
	for _, bin := range []string{"cmd/flower-hook", "cmd/flower-hook-lite"} {
		cmd := exec.Command("go", "build", "-o", t.TempDir()+"/fh", mod+bin)
		cmd.Env = append(cmd.Environ(), testbed.HookBuildEnv()...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s %v build: %v\n%s", bin, testbed.HookBuildEnv(), err, out)
		}
	}
}

// problems lists how infos (the packages r.pkg links) break r.
func problems(r rule, infos []pkgInfo) []string {
	var out []string
	for _, p := range infos {
		switch {
		case r.noCgo && strings.Contains(p.path, "sqlite"):
			out = append(out, r.pkg+" links "+p.path)
		case r.noCgo && p.cgo && p.path != "runtime/cgo" && !strings.HasPrefix(p.path, "net") && p.path != "os/user":
			out = append(out, r.pkg+" links cgo package "+p.path)
		case r.ours != nil && strings.HasPrefix(p.path, mod) && !slices.Contains(r.ours, p.path):
			out = append(out, r.pkg+" links flower package "+p.path)
		case slices.Contains(r.forbid, p.path):
			out = append(out, r.pkg+" links "+p.path)
		}
		if p.path == r.pkg {
			for _, imp := range p.imports {
				if slices.Contains(r.forbidDirect, imp) {
					out = append(out, r.pkg+" imports "+imp)
				}
			}
		}
		if slices.Contains(leaves, p.path) {
			for _, imp := range p.imports {
				if strings.HasPrefix(imp, mod) {
					out = append(out, p.path+" (a leaf) imports "+imp)
				}
			}
		}
	}
	return out
}

// TestDependencies_Control shows each kind of rule can fail: fed the
// dependency list of a package that breaks it, problems reports it.
func TestDependencies_Control(t *testing.T) {
	cmdFlower := deps(t, mod+"cmd/flower")
	for _, r := range rules {
		bad := append(slices.Clone(cmdFlower), pkgInfo{path: r.pkg, imports: r.forbidDirect})
		if len(problems(r, bad)) == 0 {
			t.Errorf("rule for %s passes cmd/flower's dependencies (SQLite, scripted, everything)", r.pkg)
		}
	}
	// Each forbidden package alone is caught.
	for _, r := range rules {
		for _, f := range r.forbid {
			if len(problems(r, []pkgInfo{{path: f}})) == 0 {
				t.Errorf("rule for %s passes a link of %s", r.pkg, f)
			}
		}
	}
	for _, leaf := range leaves {
		if len(problems(rule{pkg: "x"}, []pkgInfo{{path: leaf, imports: []string{mod + "hooks"}}})) == 0 {
			t.Errorf("a %s that imports hooks passes", leaf)
		}
	}
}
