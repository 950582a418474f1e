package hooks

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flowerhq/flower/testkit/testbed"
)

// gitConfigCases are config files in the shapes git's parser takes (and a
// few it refuses), each with the program keys it sets.
var gitConfigCases = []struct {
	name, text string
	want       []string
	bad        bool
}{
	{"plain textconv", "[diff \"pdf\"]\n\ttextconv = pdftotext\n", []string{"diff.pdf.textconv"}, false},
	{"diff command", "[diff \"x\"]\ncommand = ./run.sh\n", []string{"diff.x.command"}, false},
	{"filters", "[filter \"f\"]\n clean = a\n smudge = b\n process = c\n required\n", []string{"filter.f.clean", "filter.f.smudge", "filter.f.process"}, false},
	{"diff.external", "[diff]\n\texternal = ./x\n", []string{"diff.external"}, false},
	{"gitproxy and uploadpack", "[core]\ngitProxy = ./p\n[remote \"o\"]\nuploadpack = ./u\n", []string{"core.gitproxy", "remote.o.uploadpack"}, false},
	{"upper case section and key", "[DIFF \"Pdf\"]\nTextConv = x\n", []string{"diff.Pdf.textconv"}, false},
	{"dotted subsection", "[diff.PDF]\ntextconv = x\n", []string{"diff.pdf.textconv"}, false},
	{"key on the header's line", "[filter \"f\"] clean = x\n", []string{"filter.f.clean"}, false},
	{"crlf", "[diff \"x\"]\r\ntextconv = y\r\n", []string{"diff.x.textconv"}, false},
	{"bom", "\xef\xbb\xbf[diff \"x\"]\ntextconv = y\n", []string{"diff.x.textconv"}, false},
	{"no final newline", "[diff \"x\"]\ntextconv = y", []string{"diff.x.textconv"}, false},
	{"escaped quote in subsection", "[diff \"a\\\"b\"]\ntextconv = y\n", []string{"diff.a\"b.textconv"}, false},
	{"continued value", "[diff \"x\"]\ntextconv = a \\\n b\n", []string{"diff.x.textconv"}, false},
	{"value with quotes and comment", "[diff \"x\"]\ntextconv = \"a ; b\" # c\n", []string{"diff.x.textconv"}, false},
	{"boolean key", "[diff \"x\"]\ntextconv\n", []string{"diff.x.textconv"}, false},
	{"tab before =", "[filter \"x\"]\nsmudge\t= y\n", []string{"filter.x.smudge"}, false},
	{"comment lines", "# [diff \"x\"]\n; textconv = y\n[core]\n\tbare = false\n", nil, false},
	{"harmless keys", "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n[diff]\n\tcolorMoved = zebra\n[diff \"go\"]\n\txfuncname = x\n[filter \"f\"]\n\trequired = true\n", nil, false},
	{"diff without subsection command", "[diff]\ncommand = x\n", nil, false},
	{"comment after header", "[diff \"x\"] # textconv = y\n", nil, false},
	{"two headers on a line", "[core][diff \"x\"]textconv=y\n", []string{"diff.x.textconv"}, false},
	{"key before any section", "textconv = y\n[diff \"x\"]\ncommand=z\n", []string{"diff.x.command"}, false},
	{"unterminated quote", "[diff \"x\"]\ntextconv = \"y\n", nil, true},
	{"bad escape", "[diff \"x\"]\ntextconv = \\q\n", nil, true},
	{"space after bracket", "[ diff \"x\"]\ntextconv = y\n", nil, true},
	{"subsection without quotes", "[diff x]\ntextconv = y\n", nil, true},
	{"newline in subsection", "[diff \"x\ny\"]\ntextconv = y\n", nil, true},
	{"key with underscore", "[diff \"x\"]\ntext_conv = y\n", nil, true},
	{"space before closing bracket", "[diff \"x\" ]\ntextconv = y\n", nil, true},
	{"no space before quote", "[diff\"x\"]\ntextconv = y\n", nil, true},
	{"backslash at the end", "[diff \"x\"]\ntextconv = a\\", []string{"diff.x.textconv"}, false},
	{"lone carriage return", "[diff \"x\"]\rtextconv = y\r\n", []string{"diff.x.textconv"}, false},
	{"comment right after header", "[diff \"x\"]#c\ntextconv=y\n", []string{"diff.x.textconv"}, false},
	{"unicode subsection", "[filter \"ünï 🌼\"]\nclean = \"a\"b\t\\t\n", []string{"filter.ünï 🌼.clean"}, false},
	{"dotted deep", "[diff.a.b]\ntextconv = y\n", []string{"diff.a.b.textconv"}, false},
	{"vertical tab", "[diff \"x\"]\n\vtextconv = y\n", nil, true},
}

// TestParseGitConfig: the program keys each config sets; the files git
// refuses are refused.
func TestParseGitConfig(t *testing.T) {
	for _, c := range gitConfigCases {
		var got []string
		err := parseGitConfig([]byte(c.text), func(key, _ string, _ bool) {
			if gitProgramKey(key) {
				got = append(got, key)
			}
		})
		if (err != nil) != c.bad || !c.bad && !slices.Equal(got, c.want) {
			t.Errorf("%s: got %q, %v; want %q, bad %v", c.name, got, err, c.want, c.bad)
		}
	}
}

// TestParseGitConfigAgreesWithGit: for every case, the keys and values
// parseGitConfig reads are the ones git config --list prints, and git
// refuses exactly the files it refuses (git 2.39 installed).
func TestParseGitConfigAgreesWithGit(t *testing.T) {
	git := testbed.RequireTool(t, "git", "the differential test of the config parser")
	dir := t.TempDir()
	for i, c := range gitConfigCases {
		f := filepath.Join(dir, "c"+itoa(i))
		if err := os.WriteFile(f, []byte(c.text), 0o600); err != nil {
			t.Fatal(err)
		}
		out, gerr := exec.Command(git, "config", "--file", f, "--list", "--no-includes", "-z").Output()
		var mine []string
		perr := parseGitConfig([]byte(c.text), func(key, value string, has bool) {
			if has {
				mine = append(mine, key+"\n"+value)
			} else {
				mine = append(mine, key)
			}
		})
		if (gerr != nil) != (perr != nil) {
			t.Errorf("%s: git says %v, parser %v", c.name, gerr, perr)
			continue
		}
		theirs := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		if len(out) == 0 {
			theirs = nil
		}
		if gerr == nil && !slices.Equal(mine, theirs) {
			t.Errorf("%s: git reads %q, the parser %q", c.name, theirs, mine)
		}
	}
}

// TestRepoPrograms: the keys of a repository's config and of the files it
// includes (a relative include, an includeIf whatever its condition),
// found from a subfolder, from a linked worktree's .git file, in a
// submodule's git directory, and through GIT_DIR; a bare repository is
// found too. Control: a repository without such keys has none, and a
// folder outside any repository none.
func TestRepoPrograms(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	gitDir := func(rel, config string) {
		write(rel+"/HEAD", "ref: refs/heads/main\n")
		write(rel+"/objects/.keep", "")
		write(rel+"/refs/.keep", "")
		write(rel+"/config", config)
	}
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	gitDir("ws/.git", "[core]\n\tbare = false\n[include]\n\tpath = ../extra.cfg\n[includeIf \"onbranch:nope\"]\n\tpath = more.cfg\n")
	write("ws/extra.cfg", "[diff \"x\"]\n\ttextconv = ./conv\n")
	write("ws/.git/more.cfg", "[filter \"f\"]\n\tclean = ./clean\n")
	write("ws/sub/dir/file", "")
	gitDir("clean/.git", "[core]\n\tbare = false\n")
	gitDir("main/.git", "[core]\n")
	write("main/.git/worktrees/wt/commondir", "../..\n")
	write("main/.git/worktrees/wt/HEAD", "x\n")
	write("wt/.git", "gitdir: "+filepath.Join(root, "main/.git/worktrees/wt")+"\n")
	gitDir("main/.git/modules/lib/inner", "[diff \"s\"]\n\tcommand = ./d\n")
	gitDir("bare.git", "[remote \"o\"]\n\tuploadpack = ./u\n")
	for _, c := range []struct {
		dir  string
		env  func(string) string
		want []string
	}{
		{"ws/sub/dir", env(), []string{"diff.x.textconv", "filter.f.clean"}},
		{"wt", env(), []string{"diff.s.command"}},
		{"clean", env("GIT_DIR", filepath.Join(root, "ws/.git")), []string{"diff.x.textconv", "filter.f.clean"}},
		{"bare.git", env(), []string{"remote.o.uploadpack"}},
		{"clean", env(), nil},
		{"", env(), nil},
	} {
		got, err := repoPrograms(filepath.Join(root, c.dir), c.env)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %q %v, want %q", c.dir, got, err, c.want)
		}
	}
	write("clean/.git/config", "[diff \"x\"\n")
	if _, err := repoPrograms(filepath.Join(root, "clean"), env()); err == nil {
		t.Error("a config git cannot read was taken")
	}
}

// TestGlanceInRepoWithPrograms: a git glance in a repository whose config
// names a textconv is refused, with the key in the reason, sandbox or not;
// a glance that does not run git still passes there, so does g""it
// nowhere. Control: the same git glance in a clean repository passes.
func TestGlanceInRepoWithPrograms(t *testing.T) {
	all, _ := toolMatcher(DefaultDelegateTools)
	root := t.TempDir()
	for name, cfg := range map[string]string{"bad": "[diff \"x\"]\n\ttextconv = ./conv\n", "good": "[core]\n\tbare = false\n"} {
		for _, p := range []string{"HEAD", "objects/.keep", "refs/.keep", "config"} {
			full := filepath.Join(root, name, ".git", p)
			_ = os.MkdirAll(filepath.Dir(full), 0o700)
			_ = os.WriteFile(full, []byte(cfg), 0o600)
		}
	}
	call := func(dir, cmd string) Input {
		return Input{ToolName: "Bash", Cwd: filepath.Join(root, dir), ToolInput: bashInput(cmd)}
	}
	for _, cmd := range []string{"git diff", "git log -p -3", `g""it show HEAD`, "ls && /usr/bin/git status"} {
		for _, sb := range []Sandboxing{{}, {On: true, HookBin: "/bin/flower-hook"}} {
			d := delegateIn(call("bad", cmd), all, true, sb)
			if d.Verdict != Deny || !strings.Contains(d.Reason, "diff.x.textconv") {
				t.Errorf("%q (sandbox %v) in a repository with a textconv: %+v", cmd, sb.On, d)
			}
			if d := delegateIn(call("good", cmd), all, true, sb); d.Verdict == Deny {
				t.Errorf("control: %q (sandbox %v) in a clean repository was denied: %+v", cmd, sb.On, d)
			}
		}
	}
	if d := delegateIn(call("bad", "ls -la"), all, true, Sandboxing{}); d.Verdict != Pass {
		t.Errorf("a glance without git was refused in that repository: %+v", d)
	}
}
