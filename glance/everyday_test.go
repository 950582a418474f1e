package glance

import (
	"testing"
)

// issueReads are issue 32's item 4: reads that must be glances.
var issueReads = []string{
	`go list ./...`, `go list -m all`, `go doc fmt.Println`, `go mod graph | head`, `npm ls --depth=0`, `pip list`,
	`pip show requests`, `gofmt -l .`, `aws --version`, `gh --version`, `cat /proc/meminfo | head`,
	`ssh-keygen -lf ~/.ssh/id_ed25519.pub`,
}

// everydayReads is a sample of what a coordinator looks at in a day's work,
// written without looking at the classifier's lists (the hidden corpus is
// of this kind). Not every one has to pass: the rate must stay at or above
// 95%, and the ones refused are logged.
var everydayReads = []string{
	`git status`, `git status -s`, `git diff --stat`, `git diff HEAD~1`, `git log --oneline -20`, `git log -p -2 -- go.mod`,
	`git show --stat HEAD`, `git branch -a`, `git branch --show-current`, `git remote -v`, `git rev-parse HEAD`,
	`git log --format='%h %an %ar %s' -10`, `git blame -L 1,40 main.go`, `git ls-files | head -50`, `git tag --list`,
	`git stash list`, `git diff --name-only main...HEAD`, `git log --graph --oneline --decorate --all | head -40`,
	`git shortlog -sne`, `git describe --tags`, `git config --get remote.origin.url`, `git worktree list`,
	`git log -1 --format=%cI`, `git grep -n "TODO" -- '*.go'`, `git diff --cached`, `git show HEAD:go.mod`,
	`ls`, `ls -la`, `ls -lah ~/`, `ls -1 cmd/`, `tree -L 2 -d`, `find . -name '*.go' -newer go.mod | head`,
	`find . -type f -size +1M`, `find . -maxdepth 2 -name 'go.mod'`, `du -sh */ | sort -h`, `df -h .`, `pwd`,
	`cat go.mod`, `head -40 README.md`, `tail -100 /var/log/syslog`, `wc -l $(git ls-files)`, `wc -l *.go`,
	`grep -rn "func main" --include=*.go .`, `grep -c "" go.sum`, `rg -n 'TODO|FIXME'`, `rg --files -g '*.md'`,
	`sed -n '10,40p' glance/glance.go`, `awk -F'\t' '{print $2}' data.tsv | sort | uniq -c | sort -rn | head`,
	`jq '.scripts' package.json`, `jq -r '.version' package.json`, `cat package.json | jq .dependencies`,
	`diff -u a.txt b.txt`, `cmp -s a b && echo same`, `stat -c '%s %n' *.go`, `file bin/*`, `sha256sum dist/*`,
	`go version`, `go env GOPATH GOMODCACHE`, `go list ./...`, `go list -m all`, `go list -m -json all`,
	`go list -f '{{.ImportPath}} {{.Deps}}' ./glance`, `go doc fmt.Println`, `go doc -all ./glance`, `go mod graph | head`,
	`go list -deps ./cmd/flower | wc -l`, `gofmt -l .`, `gofmt -d glance/`, `node --version`, `npm --version`,
	`npm ls --depth=0`, `npm ls --all --json`, `npm list -g --depth=0`, `python3 --version`, `pip list`,
	`pip list --outdated`, `pip show requests`, `pip3 list --format=json`, `pip show -f requests`,
	`rustc --version`, `cargo --version`, `java -version`, `docker ps`, `docker images`, `docker logs --tail 100 web`,
	`kubectl get pods -A`, `kubectl describe node x`, `kubectl logs deploy/web --tail=50`, `helm list -A`,
	`aws --version`, `gh --version`, `terraform version`, `ps aux --sort=-%mem | head`, `ps -ef | grep -v grep | grep node`,
	`pgrep -a postgres`, `top -b -n1 | head -20`, `free -h`, `uptime`, `nproc`, `uname -a`, `cat /etc/os-release`,
	`cat /proc/meminfo | head`, `cat /proc/cpuinfo | grep 'model name' | head -1`, `cat /proc/loadavg`,
	`lsof -i :5432`, `ss -tlnp`, `netstat -tlnp`, `ip addr`, `env | sort`, `printenv PATH`, `echo $PATH`,
	`which go`, `command -v bwrap`, `type -a python3`, `id`, `whoami`, `hostname`, `date -u`, `locale`,
	`ssh-keygen -lf ~/.ssh/id_ed25519.pub`, `openssl x509 -in cert.pem -noout -dates`, `tar -tzf dist.tgz | head`,
	`unzip -l x.zip`, `zcat x.gz | head`, `xxd f | head`, `od -c f | head`, `strings bin/flower | grep -i version`,
	`systemctl status postgresql --no-pager`, `journalctl -u postgresql -n 50 --no-pager`, `ls /proc/self/fd`,
	`for f in *.go; do echo "$f: $(wc -l < "$f")"; done`, `cat <<'EOF'` + "\nnote\nEOF", `echo $'a\tb' | cut -f2`,
	`test -w . && echo RW || echo RO`, `[ -d .git ] && echo repo`, `git log --since=yesterday --oneline | wc -l`,
	`git diff --stat | tail -1`, `ls -t | head -5`, `sort -u names.txt | wc -l`, `column -t -s, data.csv | head`,
}

func TestIssueReadsEphemeral(t *testing.T) {
	acceptAll(t, issueReads, map[string]bool{})
}

// TestEverydayReadsRate: at least 95% of the day's reads are glances.
func TestEverydayReadsRate(t *testing.T) {
	seen := map[string]bool{}
	ok := 0
	for _, c := range everydayReads {
		if seen[c] {
			t.Errorf("duplicate %q", c)
		}
		seen[c] = true
		if IsEphemeral(c) {
			ok++
		} else {
			t.Logf("refused: %q", c)
		}
	}
	rate := float64(ok) / float64(len(everydayReads))
	t.Logf("everyday reads accepted: %d of %d (%.1f%%)", ok, len(everydayReads), 100*rate)
	if rate < 0.95 {
		t.Errorf("everyday reads accepted: %.1f%%, want at least 95%%", 100*rate)
	}
}
