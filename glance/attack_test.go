package glance

import (
	"testing"
)

// attacks are the bypass classes of issue 10, written as an attacker
// would: each string must not be ephemeral. They are tested as strings
// only, never run.
var attacks = map[string][]string{
	"builtin runs code, evaluates or changes the shell": {
		"jobs -x rm x", "jobs -x touch /tmp/p", "jobs", "eval 'ls'", "source ./x", ". ./x", "exec ls", "exec 3>out",
		"trap 'touch /tmp/p' EXIT", "trap - INT", "fc -s", "fc -e vi", "bind -x '\"\\C-a\": touch p'",
		"complete -C 'touch p' ls", "compgen -C 'touch p' x", "mapfile -C 'touch p' -c 1 a < f", "readarray -C x a < f",
		"printf -v PATH x", "printf -vPATH x", "printf -v -- x", "read x", "read -r line < f", "declare -f", "typeset -p",
		"builtin eval ls", "command eval ls", "command -p rm x", "command -v -p ls", "enable -f x.so y", "hash -p /tmp/x ls",
		"kill -9 1", "wait", "suspend", "disown", "shopt -s extdebug", "set -o vi", "ulimit -c 0", "caller 0",
		"let 'a[$(id)]=1'", "export -f f", "alias x=y", "unalias -a", "history -c", "history -s rm", "pushd /", "popd",
		"dirs -c", "umask 0", "logout", "exit 3", "return", "shift", "getopts ab x", "times",
	},
	"test and [[ evaluate subscripts": {
		"test -v 'a[$(touch p)]'", "[ -v 'a[$(touch p)]' ]", "[ -v x ]", "test -R ref", "[[ -v a[$x] ]]", "[[ -v x ]]",
		"[[ -R ref ]]", "[ 'a[$(id)]' -eq 1 ]", "test 'x[1]' = y", "[[ $x -eq 1 ]]", "[[ x -gt 'a[$(id)]' ]]",
		"[ -n \"$x\" ]",
	},
	"long option abbreviated (getopt_long prefix)": {
		"sort --outp=x f", "sort --out=x f", "sort --o=x f", "sort --output x f", "sort --compress-prog=sh f",
		"sort --compress=sh f", "sort --temporary-directory=/tmp f", "sort -T /tmp f", "iconv --outp=x f",
		"iconv --output x f", "tree --output x", "tree --o x", "rg --pr sh x", "rg --pre-glob '*' --pre sh x",
		"rg --hostname-b ./evil x", "rg --search-zip x", "rg -z x", "fd --exe rm", "fd --exec-b rm", "fd --ex rm",
		"ag --pag sh x", "file --compile -m x", "file --comp", "sed --in-pl 's/a/b/' f", "sed --in 's/a/b/' f",
		"sed --fi=s.sed f", "sed --file s.sed f", "sed --follow-symlinks -i 's/a/b/' f", "git diff --out=x",
		"git log --outp=x", "git diff --ext", "git grep --open-files=vim x", "git grep --open x", "git branch --del x",
		"git branch --edit", "git tag --del v1", "git remote --verb add x y", "uniq --ski=1 a b", "ls --colour=always",
		"date --se=2020-01-01", "date --s 2020-01-01", "hostname --file f", "cat --number-non", "grep --colo=always x f",
		"head --line=3 f", "jq --arg", "du --max-d=1",
	},
	"clustered short options and consumed values": {
		"sort -ro x f", "sort -nro x f", "sort -uox f", "sort -cT /tmp f", "tree -ao x", "tree -Ro x", "tree -aR",
		"sed -nfs.sed f", "sed -nis/a/b/ f", "sed -En -i s/a/b/ f", "sed -si 's/a/b/' f", "uniq -cd a b",
		"fd -Hx rm", "fd -HX rm", "file -bC", "date -us 2020", "date -Rs 2020", "printf -v x", "ls -U -Z -- -x; rm x",
		"git branch -dv x", "git branch -vd x", "git branch -lD x", "git branch -rd origin/x", "git tag -ld v1",
		"git tag -fl v1", "git tag -la v1", "git status -uall -z --untracked-files=all; git rm x",
		"head -c", "cut -f", "git log -n",
	},
	"git set/modify forms that look like reads": {
		"git config user.name x", "git config --global user.name x", "git config core.pager 'touch p'",
		"git config --local core.fsmonitor 'touch p'", "git config -f x.cfg a.b c", "git config --get-all",
		"git config --list a.b c", "git config --list a", "git config get", "git config get a b", "git config list a",
		"git config --get a b c", "git config -f --get user.name x", "git config --file --list a.b c",
		"git config user.name get", "git config --get a --unset b", "git config --replace-all a b",
		"git config set a b", "git config unset a", "git config edit", "git config --edit", "git config -e",
		"git config --get-urlmatch a", "git config --rename-section a b", "git config --remove-section a",
		"git remote -v add x y", "git remote --verbose add x y", "git remote -v remove x", "git remote -v set-url x y",
		"git remote -v prune origin", "git remote -v update", "git remote -v rename a b", "git remote set-head origin -a",
		"git remote show", "git remote get-url", "git remote -v set-branches x y", "git branch x",
		"git branch --format x y", "git branch --sort x y", "git branch -a x", "git branch -r x", "git branch --all x",
		"git branch --no-color x", "git branch -v x", "git tag -a v1", "git tag --sort x y", "git tag -s v1",
		"git tag -m msg v1", "git stash", "git stash push", "git stash -p", "git stash -- x", "git stash save x",
		"git stash clear", "git stash apply", "git stash branch x", "git stash create", "git stash store x",
		"git worktree", "git worktree prune", "git worktree lock x", "git worktree move a b", "git worktree repair",
		"git notes add", "git notes remove x", "git notes prune", "git notes merge x", "git notes edit", "git notes copy a b",
		"git reflog expire --expire=now --all", "git reflog delete x", "git reflog drop", "git reflog write",
		"git submodule add u", "git submodule init", "git submodule sync", "git submodule deinit x",
		"git submodule --quiet update", "git submodule -q foreach 'touch p'", "git submodule absorbgitdirs",
		"git -C x -c a=b status", "git --config-env=core.pager=P log", "git --exec-path=. status",
		"git --git-dir=x status", "git --work-tree=x status", "git -p log", "git --paginate log", "git --namespace=x log",
		"git -C", "git -C x", "git --no-pager", "git -- status", "git log --output=x", "git diff --ext-diff",
		"git show --output x", "git cat-file --filters HEAD:x", "git cat-file --textconv HEAD:x",
		"git ls-remote --upload-pack='touch p' x", "git grep -O x", "git grep -Ovim x", "git grep --open-files-in-pager x",
		"git count-objects x", "git version x", "git var -x",
	},
	"sed scripts that write or run": {
		"sed 'b end w out' f", "sed 'b end e touch p' f", "sed ':a w out' f", "sed ':a e id' f", "sed 't x w out' f",
		"sed 'T x e id' f", "sed 'b;w out' f", "sed ':a;e id' f", "sed 'v 4.2 w out' f", "sed 'v;e id' f",
		"sed '1!w out' f", "sed '$!e id' f", "sed '/x/ w out' f", "sed '/x/,/y/e id' f", "sed '1~2W out' f",
		"sed 's/a/b/gw out' f", "sed 's/a/b/2e' f", "sed 's/a/b/;w out' f", "sed 's|a|b|w out' f", "sed -n 'R x' f",
		"sed 'r x' f", "sed '1r /etc/passwd' f", "sed 'y/a/b/;e id' f", "sed '{w out\n}' f", "sed -n '/a/{p;w out\n}' f",
		"sed 'a\\\nx\nw out' f", "sed 'i x\ne id' f", "sed -e 'p' -e 'w out' f", "sed --expression='w out' f",
		"sed -ne 'w out' f", "sed '#n\nw out' f", "sed 'q5 w out' f", "sed 'l 5 w out' f", "sed 'z;W out' f",
		"sed -e p --expression 'e id' f", "sed 's/a' f", "sed '/a' f", "sed 'k' f", "sed '1,' f", "sed", "sed -n",
		"sed -e",
	},
	"awk programs that write or run": {
		"awk '{print > \"out\"}' f", "awk '{print \"}\" > \"out\"}' f", "awk '{print \";\" > \"out\"}' f",
		"awk '{x=\"}\"; print x > \"out\"}' f", "awk '{print $1 # }\n > \"out\"}' f", "awk '{print\n$1 > \"o\"}' f",
		"awk '/}/ {print > \"out\"}' f", "awk '{printf(\"%s\", $0) > \"o\"}' f", "awk '{print (1) > \"o\"}' f",
		"awk '{print $1 >> \"o\"}' f", "awk '{print | \"sh\"}' f", "awk '{print |& \"sh\"}' f",
		"awk 'BEGIN{\"date\" | getline d}'", "awk 'BEGIN{getline < \"/etc/shadow\"}'", "awk 'BEGIN{while ((getline l) > 0) n++}'",
		"awk 'BEGIN{system(\"touch p\")}'", "awk 'BEGIN{ system (\"id\") }'", "awk 'BEGIN{f=\"system\"; @f(\"id\")}'",
		"awk '@include \"x\"'", "awk '@load \"rwarray\"'", "awk 'BEGIN{x++ / 2; system(\"id\"); y = 1 / 3}'",
		"awk '{a = b / 2; system(\"id\") / 1}'", "awk 'BEGIN{x = \"a\\\" > \\\"q\"; print x > \"o\"}'",
		"awk '{print \"a\" \"b\" > \"o\"}' f", "awk 'BEGIN{printf \"x\" > \"/dev/stderr\"}'",
		"awk '/[/]/ {system(\"id\")} /x/' f", "awk '{print \"unterminated}' f", "awk '/unterminated' f",
		"awk -f prog.awk f", "awk -fprog.awk f", "awk -e 'BEGIN{}' f", "gawk -i inplace '{print}' f",
		"gawk -l ext 'BEGIN{}'", "awk -E x f", "gawk --sandbox -f x f", "awk", "awk -F", "awk -v", "awk -- ",
		"awk '{print $1}\n{print > \"o\"}' f", "awk '{print $1,\n$2 > \"o\"}' f", "sed 's/[/]/;s/w out/x/' f", "sed '/[/]/w out' f",
	},
	"flag value taken for a verb in multi-level CLIs": {
		"kubectl -n get delete pod x", "kubectl -n get apply -f x", "kubectl --namespace get delete pod x",
		"kubectl -s get exec x -- sh", "kubectl --context get edit x", "kubectl -v get delete pod x",
		"kubectl --kubeconfig=/tmp/evil get pods", "kubectl --kubeconfig /tmp/k get pods", "kubectl get -n",
		"kubectl config set-context x", "kubectl config use-context x", "kubectl -n x config set a b",
		"kubectl cluster-info dump --output-directory=/tmp/x", "kubectl cluster-info dump", "kubectl auth reconcile -f x",
		"kubectl delete -n get pods", "kubectl get pods --output-directory=x", "kubectl logs x --since-tim=1",
		"oc -n get delete x", "oc adm drain x", "docker -p ps run x", "docker -H ps run x", "docker -c ps rm x",
		"docker --config /tmp/x ps", "docker --context ps rm x", "docker ps --filter", "docker logs --tail",
		"docker compose -f ps up", "docker compose -p ps down", "docker compose config -o out.yml",
		"docker compose config --output out.yml", "docker container -a rm x", "docker image prune",
		"docker network create x", "docker volume create x", "docker context use x", "docker system prune",
		"docker system events x", "podman -c ps rm x", "docker run --rm alpine ls", "docker exec x ls",
		"docker inspect --size=x", "docker stats --no-stream --rm",
	},
	"verbs dropped as ambiguous": {
		"dmesg", "dmesg | tail", "dmesg -T", "ip -batch f addr", "ip -n ns a", "ip route flush all", "ss -N ns -t", "ss -K dst 1.2.3.4",
		"mount", "mount -l", "ifconfig", "ifconfig -a", "hwclock", "timedatectl", "yq '.a' f", "route -n",
		"sysctl -a", "arp -a", "iptables -L", "nft list ruleset",
	},
	"options not on the verb's list": {
		"ls --foo", "ls -j", "cat -z", "head --pid=1 f", "wc -x f", "stat --zz f", "grep --pre=x y f",
		"grep -K x f", "du -Y", "df --sync", "uname --set", "id -x", "tail --retr f", "find . -fprint0 x",
		"find . -D exec", "find . -name", "find . -newerXY x", "find . -exec", "find . -execdir ls ;", "find . -ok ls ;",
		"find . -delete", "find . -fls x", "find . -fprintf x %p", "find . -files0-from x", "find . -printf",
		"top", "top -n 1", "top -d 1", "ps --rm", "ps aux -Z --exec", "ps zzz", "lsof -D b", "lsof +r",
		"lsof -i :80 -D b", "env -u X ls", "env X=1", "env --chdir=/ ls", "hostname x", "hostname -F f", "hostname -b x",
		"date 010112002020", "date +%F x", "date -s now", "date --set now", "uniq a b", "uniq -c a b",
		"jq --arg x", "jq --rawfile x", "seq -x 5", "echo $(id)", "base64 -o x f", "command -p ls", "command ls",
		"command -v", "command -v -x", "printf", "printf \"$fmt\"", "type -x ls", "which --exec ls",
		"cut --output=x f", "diff --to-fil=x a", "column --outp x", "fmt -o x", "file -m x -C", "tree -H . -o x",
	},
}

func TestAttacksRefused(t *testing.T) {
	n := refuseClasses(t, attacks)
	if n < 150 {
		t.Fatalf("only %d attack strings, want at least 150", n)
	}
	t.Logf("%d attack strings in %d classes refused", n, len(attacks))
}

// newReads are everyday reads that use the options, subcommands and
// scripts the allowlist must keep: the control for the attacks above.
var newReads = []string{
	"git log --author=alice --since=2.weeks --oneline", "git log -n 5 --format=%H", "git log -5 -p", "git diff -U3 --stat",
	"git config --get remote.origin.url", "git config get user.name", "git config --global --list",
	"git config -f .gitmodules --get-regexp path", "git config list", "git remote get-url origin",
	"git remote -v show origin", "git branch --contains HEAD", "git branch --format='%(refname)' --list 'f*'",
	"git tag --contains v1 'v*'", "git tag -n3", "git stash show -p", "git reflog", "git reflog show main -5",
	"git notes", "git -C . --no-pager log -1 --stat", "git status -uno", "git status --porcelain=v2 --branch",
	"git blame -w -M -C -L 1,5 x.go", "git ls-remote --tags origin", "git show-ref --heads",
	"kubectl -n kube-system get pods -o wide", "kubectl get pods -n get", "kubectl --context prod get nodes",
	"kubectl get pods -l app=web -o jsonpath='{.items[*].metadata.name}'", "kubectl logs -f -c app web-1 --tail=20",
	"kubectl config view --minify", "kubectl auth can-i list pods", "kubectl version --client -o json",
	"oc get pods", "kubectl top pods -A", "docker -D ps -a", "docker --log-level=debug ps",
	"docker container ls --format '{{.Names}}'", "docker compose version --short", "docker compose ls -a",
	"docker image inspect -f '{{.Id}}' alpine", "podman ps -a", "docker system df -v",
	"sed -n '/start/,/end/p' f", "sed -E 's/(a|b)+/x/g;s/c/d/2' f", "sed -n -e '1p' -e '$p' f", "sed -ne '/x/{p;q}' f",
	"sed ':a;N;$!ba;s/\\n/ /g' f", "sed -e ':top' -e 's/aa/a/;t top' f", "sed '1i header' f", "sed '$a footer' f",
	"sed '/x/c\\\nreplaced' f", "sed -z 's/\\n//g' f", "sed --posix -n 'l' f",
	"awk 'BEGIN{x = 4 / 2; print x}'", "awk '{ if ($3 > 10) print $1 }' f", "awk '{print ($1 > 5)}' f",
	"awk -F, -v OFS=';' '{$1=$1; print}' f", "awk '/a|b/ {n++} END {print n}' f", "awk '{s += $2} END {printf \"%d\\n\", s}' f",
	"awk 'length($0) > 80' f", "awk '{print \">\" $0}' f", "awk '# comment > x\n{print}' f", "gawk '{print tolower($0)}' f",
	"sort -t: -k3,3n /etc/passwd", "sort -rn -k2 data", "uniq -c", "head -n5 f", "tail -n +2 f", "tail -F app.log",
	"grep -rnw --include='*.go' -e foo .", "grep -A3 -B2 x f", "rg -tgo -n foo", "rg --json x", "ls -la --color=auto",
	"ls -lh --time-style=long-iso", "du -h -d 1", "df -hT", "find . -maxdepth 1 -type d -printf '%f\\n'",
	"find . -path ./vendor -prune -o -name '*.go' -print", "find . \\( -name a -o -name b \\) -ls", "find -L . -type l",
	"jq --arg v 1 '.a == $v' f", "jq -n --argjson x '{}' '$x'", "jq -r --args '$ARGS' a b", "ps -o pid,cmd -p 1",
	"ps ax -o pid,comm", "pgrep -a node", "lsof -i :8080 -t", "lsof -p 1", "top -b -n 1", "date -u +%FT%TZ",
	"date -d @0 +%s", "hostname -I", "env", "tree -L 2 -I node_modules", "fd -e go -t f", "file -b --mime-type x",
	"stat -c %s f", "wc -lc f", "cut -d, -f2- f", "tr -d '\\r'", "test -d x", "[ -f x ]",
	"printf '%s\\n' \"$x\"", "seq -5 5", "base64 -w0 f", "command -v go", "type -a ls", "diff -ru a b",
	"cmp -s a b", "comm -23 a b", "column -s, -t f", "od -An -tx1 f", "nl -ba f", "git grep -n -e foo -- '*.go'",
}
