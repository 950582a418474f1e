package glance

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// readOnlyCommands are everyday glances a coordinator runs: all ephemeral.
var readOnlyCommands = []string{
	"ls", "ls -la", "ls -la /tmp", "ls -lah src/ | head -20", "ls *.go", "ls ~/projects",
	"pwd", "df -h", "du -sh .", "du -sh * | sort -h | tail -5", "whoami", "id -u", "uname -a",
	"uptime", "date", "date +%Y-%m-%d", "date -u +%s", "date -d yesterday +%F", "date --iso-8601=seconds",
	"env", "printenv PATH", "hostname", "hostname -f", "nproc", "free -m", "lscpu | head", "locale",
	"git status", "git status --short", "git status -sb", "git diff", "git diff --stat", "git diff HEAD~1 -- main.go",
	"git diff --cached --name-only", "git log --oneline -10", "git log --graph --oneline --all | head -30",
	"git log -p -1 --format=%H", "git log --since=2.weeks --author=alice --oneline", "git show HEAD",
	"git show --stat HEAD~2", "git show HEAD:README.md | head -50", "git branch", "git branch -a", "git branch -vv",
	"git branch --show-current", "git branch --list 'feature/*'", "git branch --merged main", "git branch -r --contains HEAD",
	"git rev-parse HEAD", "git rev-parse --abbrev-ref HEAD", "git rev-parse --show-toplevel", "git ls-files | wc -l",
	"git ls-files -m", "git blame -L 10,20 main.go", "git describe --tags --always", "git shortlog -sn | head",
	"git tag", "git tag -l 'v1.*'", "git tag --list --sort=-creatordate | head -3", "git stash list", "git stash show -p stash@{0}",
	"git remote -v", "git remote show origin", "git config --get user.name", "git config --list | grep alias",
	"git -C . status", "git --no-pager log -3", "git -C ./ --no-pager diff --stat", "git worktree list",
	"git reflog -10", "git cat-file -p HEAD", "git rev-list --count HEAD", "git for-each-ref --format='%(refname)' refs/heads",
	"git merge-base main HEAD", "git grep -n TODO -- '*.go'", "git ls-tree -r HEAD --name-only | head",
	"git diff main...HEAD --name-status", "git log --format='%h %s' main..HEAD", "git status 2>&1", "git status --porcelain >/dev/null 2>&1",
	"git --version", "git submodule status", "git count-objects -vH",
	"ps aux", "ps aux | grep node | grep -v grep", "ps -ef | head", "pgrep -fl python", "lsof -i :8080", "top -b -n 1 | head -20",
	"docker ps", "docker ps -a --format '{{.Names}}'", "docker images", "docker logs --tail 50 web", "docker inspect web | jq '.[0].State'",
	"docker compose ls", "docker container ls -a", "kubectl get pods", "kubectl get pods -n kube-system -o wide",
	"kubectl describe pod web-1", "kubectl logs web-1 --tail=100", "kubectl config current-context",
	"cat README.md", "cat go.mod | head -5", "head -n 20 main.go", "tail -n 50 app.log", "tail -f /dev/null",
	"wc -l *.go", "stat go.mod", "file main.go", "find . -name '*.go' | head", "find . -type f -name \"*.md\" -maxdepth 2",
	"find src -newer go.mod -type f", "tree -L 2", "tree -d src", "nl main.go | head", "od -c file.bin | head", "sha256sum go.sum",
	"readlink -f .", "realpath ../x", "basename /a/b/c.go", "dirname /a/b/c.go",
	"which go", "which -a python3", "whereis git", "command -v jq", "type ls",
	"grep -rn TODO .", "grep -rn 'func main' --include='*.go' .", "grep -c error app.log", "rg TODO", "rg -n 'fn main' src/",
	"rg --files | wc -l", "sort names.txt | uniq -c | sort -rn | head", "cut -d: -f1 /etc/passwd | sort", "tr a-z A-Z < /dev/null",
	"awk '{print $1}' access.log | sort | uniq -c", "awk -F: '$3 > 1000 {print $1}' /etc/passwd", "awk 'NR==1' file.txt",
	"sed -n '1,20p' main.go", "sed 's/foo/bar/g' file.txt | head", "sed -n '/ERROR/p' app.log", "sed -e 's/a/b/' -e 's/c/d/g' x",
	"jq '.dependencies' package.json", "jq -r '.name' package.json", "diff a.txt b.txt", "diff -u old.go new.go | head -40",
	"cmp a b", "comm -12 a b", "column -t file", "echo hello", "echo $HOME", "printf '%s\\n' hi", "true", "test -f go.mod && echo yes",
	"[ -d .git ] && git status || echo 'no repo'", "[[ -f go.mod ]] && cat go.mod", "seq 1 5", "uniq -c sorted.txt",
	"(git status; true) || ls", "{ git status; git log -1; }", "(git status; git diff --stat)", "git status; git log -1",
	"ls && pwd", "ls || true", "! grep -q foo file", "time git status", "LANG=C sort names.txt", "LC_ALL=C ls",
	"git status | cat", "GIT_PAGER=cat git log -1", "if [ -f go.mod ]; then cat go.mod; else ls; fi",
	"for f in a.go b.go; do wc -l \"$f\"; done", "case x in x) echo yes;; esac", "grep foo <<< \"foo bar\"",
	"cat <<'EOF'\nhello\nEOF", "/usr/bin/git status", "/bin/ls -la", "ls -la | grep -v '^d' | awk '{print $5, $9}' | sort -n",
	"git log --oneline | grep -i fix | wc -l", "cat package.json | jq .scripts", "du -ah . 2>/dev/null | sort -rh | head -n 10",
	"ls -la &>/dev/null", "ls 1>&2", "git diff --stat HEAD~3..HEAD", "netstat -tlnp",
	"groups", "w", "who", "tac log.txt | head", "base64 -d blob.txt | head -c 100",
	"find . -name '*.go' -not -path './vendor/*' | sort ; ls",
	"git log -1 --format=%cd --date=relative", "fd -e go", "sort -k2 -n data.txt",
	"sort -u names.txt", "ls -- -weird-name", "echo 'a > b'", "echo \"x | y\"", "grep -E 'a|b' f", "grep '>' file",
	"git show HEAD --name-only --pretty=format:", "jq -n '1+1'",
	"[[ 3 -gt 2 ]] && echo ok", "[[ -n $HOME ]] && ls", "[[ $a == b* ]] || pwd", "sed '$!N;s/\\n/ /' f",
	"sed -n '1~2p' f", "sed 'y/abc/xyz/' f", "sed '/start/,/end/d' f", "l\\s -la", "\"ls\" -la", "git tag -n5",
}

// allCases is every table string: the fuzz test's seed corpus.
func allCases() []string {
	out := append(append([]string{}, readOnlyCommands...), newReads...)
	out = append(out, round3Reads...)
	out = append(out, rootClassReads...)
	out = append(out, issueReads...)
	out = append(out, everydayReads...)
	return append(out, refusedCases()...)
}

// refusedCases is every string that must not be ephemeral.
func refusedCases() []string {
	out := append([]string{}, bypassCommands...)
	for _, cmds := range attacks {
		out = append(out, cmds...)
	}
	for _, cmds := range round3Bypasses {
		out = append(out, cmds...)
	}
	for _, cmds := range rootClassBypasses {
		out = append(out, cmds...)
	}
	return out
}

func TestNewReadsEphemeral(t *testing.T) {
	for _, c := range newReads {
		if !IsEphemeral(c) {
			t.Errorf("IsEphemeral(%q) = false, want true (everyday read)", c)
		}
	}
}

func FuzzIsEphemeral(f *testing.F) {
	for _, c := range allCases() {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		if !IsEphemeral(cmd) {
			return
		}
		file, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
		if err != nil {
			t.Fatalf("%q is ephemeral but does not parse: %v", cmd, err)
		}
		// The same command printed back by the parser's printer must get
		// the same verdict: the verdict depends on what the shell runs,
		// not on how it is spelled.
		var b strings.Builder
		if err := syntax.NewPrinter().Print(&b, file); err != nil {
			t.Fatalf("print %q: %v", cmd, err)
		}
		if !IsEphemeral(b.String()) {
			t.Errorf("%q is ephemeral but its re-print %q is not", cmd, b.String())
		}
		// Independent check: every simple command's expanded argv names an
		// allowed verb, and nothing runs in the background.
		calls, _ := tracedCalls(t, cmd)
		for _, c := range calls {
			name, ok := verbName(c.argv[0])
			if _, listed := verbs[name]; !ok || !listed {
				t.Errorf("%q is ephemeral but runs %s", cmd, showArgv(c.argv[:1]))
			}
		}
		syntax.Walk(file, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.Stmt:
				if n.Background {
					t.Errorf("%q is ephemeral but backgrounds", cmd)
				}
			}
			return true
		})
	})
}
