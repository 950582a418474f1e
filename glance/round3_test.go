package glance

import (
	"testing"
)

// round3Bypasses are issue 22's classes: commands that write, run programs
// or change state once bash has expanded their words or the tool's own
// parser has read them. Tested as strings only, never run.
var round3Bypasses = map[string][]string{
	"brace expansion across quotes": {
		`find {".","-delete"}`, `find {.,-delete}`, `find . {"-delete",-print}`, `find {".",'-delete'}`,
		`find {".","-exec","rm","{}",";"}`, `find . -name x {"-delete",}`, `find . {-name,x,-delete}`,
		`git -C {".","-c","core.fsmonitor=touch p"} status`, `git {"-c","core.pager=touch p"} log`,
		`git log {"--output=x",-1}`, `git diff {--output,x}`, `git {push,--force}`, `git branch {-D,main}`,
		`kubectl -n {"default","delete","pod","web"} get pods`, `kubectl {delete,pod,web}`,
		`kubectl get pods {-n,x,--kubeconfig=/tmp/k}`, `docker {rm,-f,web}`, `docker ps {-a,--config=/tmp/x}`,
		`sort {-o,out} f`, `sort {"-o","out"} f`, `sort -{o,x} f`, `sed {-i,s/a/b/} f`, `sed -{i,n} 's/a/b/' f`,
		`sed {"-i","s/a/b/"} f`, `awk {-f,prog.awk} f`, `uniq {in,out}`, `uniq {a,b}{1,2}`, `tree {-o,out}`,
		`file {-C,-m,x}`, `printf {"-v","PATH","/tmp/x"}`, `printf {-v,x,y}`, `{rm,-rf,x}`, `{"rm",x}`,
		`{mv,a,b}`, `ls {;,rm}`, `git config {user.name,x}`, `git config user.{name,email}`,
		`git tag {-d,v1}`, `git stash {drop,}`, `rg {--pre,sh} x`, `fd {-x,rm}`, `date {-s,2020-01-01}`,
		`hostname {evil,}`, `find {.,-fprint,out}`, `env {rm,x}`, `command {-p,rm}`,
		`find {".","-"}delete`, `find . -{delete,print}`, `find . -{de,x}lete`, `find . -de{let,x}e`,
		`git {-C,.}{,} log --output=x`, `sort -{o,}out f`, `printf -{v,x} y z`,
	},
	"sequences and nesting": {
		"find \\", "ls -la \\", "git log \\", "find . {$,}0", "sort {,}{$,}000{00 0", "git log {$,}HOME",
		`uniq {1..2}`, `uniq f{1..2}`, `uniq x{a..b}`, `git branch -{D,d} x`, `find . -{a,{delete,print}}`,
		`find . {-print,{-delete,-ls}}`, `sort -{o..o}x f`, `tree -{o,L} x 1`, `uniq {a,{b,c}}`,
		`printf {-v,{a,b}} c`, `uniq {01..02}`, `uniq {a..c..2}`,
	},
	"bracket globs, globs and tildes": {
		`uniq go.["ms"]["ou"]["dm"]`, `uniq go.[ms][ou][dm]`, `uniq go.*`, `uniq *`, `uniq ?`, `find ["-"]delete`,
		`find . ["-"]delete`, `find . -[d]elete`, `find . *`, `find *`, `sort *`, `sort -o *`, `sort ["-"]o x f`,
		`sort -k *`, `uniq ["-"]c in out`, `git log *`, `git diff -- *`, `git log ["-"]-output=x`,
		`kubectl get *`, `docker ps *`, `sed ["-"]i s/a/b/ f`, `sed -n * f`, `awk * f`, `tree *`, `tree -L *`,
		`file *`, `printf *`, `printf ["-"]v x y`, `date *`, `hostname *`, `env *`, `rg --pre *`, `fd *`,
		`find ~`, `uniq ~/a ~/b`, `git -C ~ status`, `sort -o ~/x f`, `find . -newer ~/x -delete`,
		`cat /*/watchdog`, `cat /de?/watchdog`, `head /dev/w*`, `wc -c ../*/watchdog`, `cat ~/../../dev/watchdog`,
		`cat ~user/x`, `cat */../../dev/watchdog`,
	},
	"shell state": {
		`for PATH in /tmp/x; do ls; done`, `for HOME in /tmp/x; do git status; done`, `for IFS in x; do ls; done`,
		`for GIT_DIR in /tmp/r; do git log; done`, `for LD_PRELOAD in /tmp/x.so; do ls; done`,
		`for BASH_ENV in x; do ls; done`, `for http_proxy in http://x; do ls; done`, `for Path in x; do ls; done`,
		`for auto_resume in x; do ls; done`, `for histchars in x; do ls; done`, `for _ in x; do ls; done`,
		`PATH=/tmp/x`, `HOME=/tmp/x`, `IFS=x`, `GIT_DIR=/tmp/r`, `https_proxy=http://x`, `no_proxy=x`,
		`x=1; PATH=/tmp`, `Foo=1`, `x=$(id)`, `x=1 PATH=/tmp ls`, `GIT_DIR=x git log`, `BASH_ENV=x ls`,
		`LANG=/tmp/x ls`, `LC_ALL=../x sort f`, `all_proxy=x ls`, `HOME=/tmp/x git status`,
		`for x in -delete; do find . $x; done`, `for x in -o; do sort $x out f; done`, `x=-delete; find . $x`,
		`x=-i; sed $x s/a/b/ f`, `x='-o out'; sort $x f`, `for x in -v; do printf $x PATH y; done`,
		`for x in /dev/watchdog; do cat $x; done`, `x=/dev/watchdog; cat $x`, `for x in rm; do $x f; done`,
		`x=rm; $x f`, `for x in '*'; do uniq $x; done`, `for x in "a b"; do uniq $x; done`,
		`for x in a; do x=-delete; find . $x; done`, `for f in *; do sort "$f"; done`, `for f in src/*; do f=-o; sort "$f" out; done`, `for f in src/*; do true && f=-o; sort "$f" out; done`, `for f in *; do uniq "$f"; done`, `for f in *; do cat $f; done`, `for f in ../*; do cat "$f"; done`, `for f in /*; do cat "$f"; done`, `for f in *; do cat "x$f"; done`, `for x in a b; do x=/dev/kmsg; cat $x; done`,
		`x=a; if true; then x=-delete; fi; find . $x`, `x=a; true && x=-delete; find . $x`,
		`x=a; (x=-delete); find . $x`, `for x; do find . $x; done`, `x=a; x=-o; sort $x out f`,
		`printf -v x y`, `read x`, `read -r x < f`, `declare x=1`, `local x=1`, `export x=1`, `"read" x`,
		`'declare' -x y=1`, `{read,x}`, `{export,x=1}`, `"export" PATH=/tmp`, `re\ad x`, `x=1; export x`,
		`mapfile a < f`, `readarray a < f`, `typeset x=1`, `{declare,-x,y}`, `builtin read x`,
	},
	"git parsers": {
		`git diff -U --output=.git/config`, `git diff -U --output .git/config`, `git log --format --output=.git/HEAD`,
		`git log --pretty --output=x`, `git log --min-parents --output=x`, `git log --max-parents --output=x`,
		`git show --unified --output=x`, `git log --encoding --output=x`, `git diff --unified --ext-diff`,
		`git config user.name x --get`, `git config user.name x --list`, `git config a.b c -l`,
		`git config user.name --get x`, `git config --get a.b -- c d`, `git config edit`, `git config set a.b c`,
		`git config unset a.b`, `git config get`, `git config a b`, `git config list --show-origin`,
		`git log --show-signature`, `git log --format=%G?`, `git log --pretty=format:%GS`, `git log --format=%GK`,
		`git show --format='%h %G?'`, `git log --pretty=tformat:%GG`, `git for-each-ref --format='%(signature)'`,
		`git branch --format='%(signature:signer)'`, `git diff --textconv`, `git show --textconv HEAD`,
		`git grep --textconv x`, `git log --alternate-refs`, `git diff --ext-diff`, `git -C ../other status`,
		`git -C /tmp/x log`, `git -C sub diff`, `git -C .. status`, `git -C ./.. status`, `git -C . -C .. log`,
		`git --git-dir=.git log`, `git --work-tree=. status`, `git --exec-path=. status`, `git -C. status`,
	},
	"other parsers": {
		`tree -Lo 2 OUT`, `tree -oL OUT 2`, `tree -aLo 1 x`, `tree -L 2 -o x`, `tree -Ho . x`, `tree -L`,
		`tree -P`, `tree -R -H . x`, `tree -- -o x`, `tar -tf host:x.tar`, `tar tf user@host:/x.tar`,
		`yarn --version`, `pnpm -v`, `mvn --version`, `ag --context --pager=sh x`, `ag --context --pager sh x`,
		`ag -C --pager=sh x`, `ag --context=2 --pager=sh x`, `ag -A --pager=evil x`, `sort -k -o f`,
		`sort -k -ox f`, `head -n -o x f`, `uniq -f -x`, `grep -e --pre=x f`, `cut -d -o f`,
		`kubectl get -k .`, `kubectl get --kustomize=.`, `kubectl get pods -k x`, `oc get -k .`,
		`docker compose ps`, `docker compose -f http://x/c.yml ps`, `docker compose config`,
		`docker -H ssh://h ps`, `docker --host=ssh://h ps`, `docker -c remote ps`, `docker --context=remote ps`,
		`docker compose logs web`, `docker compose -f dev.yml ps --services`, `docker compose top`,
		`docker compose images`, `file -z x.gz`, `file -Z x.gz`, `file --uncompress x.gz`, `file -bz x`,
		`file --uncompress-noreport x`, `tar -xf x.tar`, `tar xf x.tar`, `tar -czf x.tgz .`, `tar -tf x.tar -C /`,
		`tar -tvf x.tar --to-command=sh`, `tar -tf x.tar -I sh`, `tar -tfv x.tar`, `tar --list -f x -I sh`,
		`unzip x.zip`, `unzip -o x.zip`, `unzip -l x.zip -d /tmp`, `gzip f`, `gzip -d f.gz`, `zstdcat *`, `zstdcat -o out x.zst`, `xzcat --files=list`, `gzip -l -f x`,
		`xxd -r dump out`, `xxd in out`, `xxd -r -p dump`, `xxd -rp d`, `journalctl --vacuum-size=1M`,
		`journalctl -u x`, `journalctl --rotate --no-pager`, `journalctl --flush --no-pager`,
		`systemctl status x`, `systemctl restart x --no-pager`, `systemctl stop x`, `systemctl -H host status --no-pager`,
		`ip link set eth0 up`, `ip addr show dev eth0 flush`, `ip -force addr`, `ip netns exec x sh`,
		`ss -K dst x`, `ss -D out`, `ss -F filter`, `ulimit -c 0`, `ulimit -n 10`, `umask 077`, `umask -S 077`,
		`getent -s files hosts`, `getent`, `openssl x509 -in c.pem -out d.pem -noout`, `openssl x509 -in c.pem`,
		`openssl x509 -in c.pem -noout -engine x`, `openssl req -new`, `openssl enc -in a -out b`,
		`ssh-keygen`, `ssh-keygen -t ed25519 -f k`, `ssh-keygen -R host`, `ssh-keygen -lf`, `ssh-keygen -D x.so`,
		`ssh-keygen -p -f k`, `helm install x y`, `helm upgrade x y`, `helm --kubeconfig /tmp/k list`,
		`helm plugin list`, `helm list --post-renderer=x`, `kubectl rollout restart deploy/x`,
		`kubectl rollout undo deploy/x`, `kubectl rollout pause deploy/x`, `go run .`, `go env -w GOFLAGS=x`,
		`go env -u GOPROXY`, `go build`, `go version -m x`, `node x.js`, `node -e x`, `python3 -c x`,
		`python3 x.py`, `java -jar x.jar`, `gcc x.c`, `make`, `cargo build`, `npm install`, `npm -v x`,
		`pip install x`, `terraform apply`, `ruby -e x`, `perl -e x`, `docker --version x`,
	},
	"device and kernel files": {
		`cat ./../../../dev/watchdog`, `cat src/../../../../proc/kmsg`, `cat /dev/watchdog`, `head -c1 /dev/watchdog`, `cat /proc/kmsg`, `tail -f /proc/kmsg`, `wc -c /dev/sda`,
		`grep x /dev/tty`, `od /dev/mem`, `cat /sys/kernel/x`, `cat /dev/../dev/watchdog`, `cat //dev/watchdog`,
		`cat ../../../../../dev/watchdog`, `grep -f /dev/watchdog x`, `grep --file=/dev/watchdog x`,
		`wc --files0-from=/dev/watchdog`, `sort --files0-from=/proc/kmsg`, `diff /dev/watchdog x`,
		`cat < /dev/watchdog`, `wc -l < /proc/kmsg`, `cat < ../x`, `cat < /etc/passwd`, `jq . /dev/watchdog`,
		`xxd /dev/watchdog`, `for f in /dev/watchdog; do cat $f; done`, `strings -f /proc/kmsg`,
		`head -c1 /dev/./watchdog`, `cat /dev/fd/3`, `grep -c x /proc/kmsg`, `file /dev/watchdog`,
		`grep -r x /dev`, `grep -r x /proc`, `tail /dev/input/event0`, `cat -A /dev/ttyS0`, `git diff --no-index /dev/watchdog x`,
	},
	"awk dialects": {
		`awk 'BEGIN{n = length /#/; system("touch p")}'`, `awk 'BEGIN{exit /x/; system("id")}'`,
		`awk '{x = a / 2 /; print}'`, `awk '{print (1) / 2 / 3}'`, `awk '{ n = length / 2 }'`, `awk '{ y = x / 2 }' f`,
		`awk 'BEGIN{ a = f() / 3 }'`, `mawk 'BEGIN{n = length /#/; system("id")}'`, `gawk '{ q = NR / 2 }'`,
	},
}

// round3Reads are everyday reads the new rules keep: the control for the
// bypasses above (the same verbs and forms, read-only).
var round3Reads = []string{
	`go version`, `go env`, `go env GOPATH`, `go env GOOS GOARCH`, `go env -json`, `node --version`, `node -v`,
	`python3 --version`, `python3 -V`, `python --version`, `java -version`, `java --version`, `javac -version`,
	`gcc --version`, `g++ --version`, `clang --version`, `rustc --version`, `cargo --version`, `npm --version`,
	`npm -v`, `pip --version`, `pip3 --version`, `ruby --version`, `perl -v`, `make --version`, `cmake --version`,
	`terraform version`, `docker --version`, `docker -v`, `git --version`, `kubectl version --client`,
	`helm version`, `helm version --short`, `dotnet --version`, `php -v`, `deno --version`,
	`tar -tf x.tar`, `tar -tzvf x.tgz`, `tar tf x.tar`, `tar -tjf x.tbz`, `tar -tvf x.tar dir/`, `tar tvzf x.tgz`,
	`unzip -l x.zip`, `unzip -lv x.zip`, `unzip -Z x.zip`, `unzip -Z1 x.zip`, `zipinfo x.zip`, `zipinfo -1 x.zip`,
	`gzip -l x.gz`, `zcat f.gz | head`, `xzcat f.xz | head -5`, `bzcat f.bz2 | wc -l`, `zcat -f f`, `zcat logs/*.gz | grep x`,
	`wc -l < data.csv`, `sort < names.txt`, `head -5 < src/main.go`, `grep -c x < app.log`, `cat < ./go.mod`,
	`git config user.email`, `git config user.name`, `git config --get user.email`, `git config --list`,
	`git config -l`, `git config --global --get core.editor`, `git config --get-regexp alias`,
	`git config --show-origin --get user.name`, `git config --local --list`, `git show-branch`,
	`git show-branch --all`, `git show-branch -a --list`, `git -C . status`, `git -C ./ log -1`,
	`git diff -U5`, `git diff --unified=5`, `git diff -U0 HEAD`, `git log --format=%H -3`, `git log --pretty=oneline`,
	`git log --pretty`, `git log --min-parents=2 --oneline`, `git log --max-parents=1 -5`, `git log --format='%h %an %s'`,
	`git log --pretty=format:'%h %s' -5`, `git log --encoding=UTF-8 -1`, `git config get user.name`, `git config list`,
	`kubectl rollout status deploy/web`, `kubectl rollout history deploy/web`, `kubectl rollout status -w deploy/x -n prod`,
	`kubectl rollout history deploy/web --revision=2`, `helm list`, `helm list -A`, `helm ls -n prod`,
	`helm status web`, `helm history web`, `systemctl status nginx --no-pager`, `systemctl status --no-pager`,
	`systemctl --no-pager status sshd -l`, `systemctl is-active nginx`, `systemctl is-enabled docker`,
	`systemctl list-units --no-pager --type=service`, `systemctl list-timers --no-pager`,
	`journalctl -u nginx -n 50 --no-pager`, `journalctl --no-pager -b -p err`, `journalctl -u x --since today --no-pager`,
	`journalctl --no-pager --disk-usage`, `journalctl -k -n 20 --no-pager`, `ip addr`, `ip -br addr`,
	`ip -br a`, `ip route`, `ip route show`, `ip -4 addr show dev eth0`, `ip link show`, `ip -j addr`,
	`ip neigh`, `ip route get 1.1.1.1`, `ss -tlnp`, `ss -tunap`, `ss -s`, `ss -ltn`, `ulimit -a`, `ulimit -Sa`,
	`umask`, `umask -S`, `getent hosts example.com`, `getent passwd root`, `getent group docker`,
	`xxd f | head`, `xxd -l 64 f`, `xxd -p f`, `xxd -c 16 -g 1 f`, `openssl version`, `openssl version -a`,
	`openssl x509 -noout -subject -in cert.pem`, `openssl x509 -in cert.pem -noout -text`,
	`openssl x509 -in c.pem -noout -dates -issuer`, `openssl x509 -noout -fingerprint -sha256 -in c.pem`,
	`ssh-keygen -lf key.pub`, `ssh-keygen -l -f key.pub`, `ssh-keygen -lvf key.pub`, `ssh-keygen -E md5 -lf key.pub`,
	`file x.gz`, `file -b x`, `kubectl get pods -f pod.yaml`, `docker compose ls`, `docker compose version`,
	`tree -L 2 -a`, `tree -aL 2`, `tree -L 1 -I node_modules`, `ag --context=2 foo`, `ag -C 2 foo`, `ag foo src`,
	`find . -name '*.go' -print`, `find {src,cmd} -name '*.go'`, `ls {a,b}.go`, `cat {go.mod,go.sum} | wc -l`,
	`wc -l src/{a,b,c}.go`, `echo {1..5}`, `echo {a..e}`, `ls -la {src,docs}/`,
	`for f in a.go b.go; do wc -l "$f"; done`, `for f in *.go; do wc -l "$f"; done`, `for f in src/*.txt; do sort "$f"; done`, `for f in src/*; do f=-o sort "$f" out; done`, `for x in a b; do echo $x; done`,
	`for d in src cmd; do ls "$d"; done`, `x=main.go; wc -l $x`, `f=go.mod; cat "$f"`, `n=5; head -n $n f`,
	`dir=src; ls $dir`, `for f in a b; do grep -n TODO "$f.go"; done`, `sort src/*.txt`, `file src/*.go`,
	`rg TODO src/*.go`, `cat /dev/null`, `head -c 16 /dev/urandom | xxd`, `cat /etc/hostname`, `ls /dev/null`,
	`grep -rn TODO ./src`, `ls /dev`, `ls -l /dev/watchdog`, `echo /proc/kmsg`, `stat /dev/sda`, `stat -c%s /proc/kmsg`, `ls ~user`, `ls ~`, `cat ~/.gitconfig`, `ls ~/projects/*`, `echo ~`, `awk '{print $1/1024}' f`,
	`awk 'NR % 2 == 0' f`, `awk '{print a[$1] / 2}' f`, `awk '{print "/" $0}' f`, `awk '/x/ {print}' f`,
	`awk '{s += $2} END {print s}' f`, `awk '{ n++ } END { print n }' f`, `echo $HOME`, `ls $HOME`, `printenv HOME`,
}

func TestRound3BypassesRefused(t *testing.T) {
	n := refuseClasses(t, round3Bypasses)
	if n < 200 {
		t.Fatalf("only %d new bypass strings, want at least 200", n)
	}
	t.Logf("%d new bypass strings in %d classes refused", n, len(round3Bypasses))
}

func TestRound3ReadsEphemeral(t *testing.T) {
	acceptAll(t, round3Reads, map[string]bool{})
	if len(round3Reads) < 150 {
		t.Fatalf("only %d everyday reads, want at least 150", len(round3Reads))
	}
	t.Logf("%d everyday reads accepted", len(round3Reads))
}

// refuseClasses checks that no command of any class is ephemeral (and
// that none is listed twice) and returns how many there are.
func refuseClasses(t *testing.T, classes map[string][]string) int {
	t.Helper()
	n := 0
	seen := map[string]string{}
	for class, cmds := range classes {
		for _, c := range cmds {
			if prev, dup := seen[c]; dup {
				t.Errorf("duplicate %q (%s, %s)", c, prev, class)
			}
			seen[c] = class
			n++
			if IsEphemeral(c) {
				t.Errorf("%s: IsEphemeral(%q) = true, want false", class, c)
			}
		}
	}
	return n
}

// acceptAll checks that every command is ephemeral and listed once (seen
// is shared with the caller's other tables).
func acceptAll(t *testing.T, cmds []string, seen map[string]bool) {
	t.Helper()
	for _, c := range cmds {
		if seen[c] {
			t.Errorf("duplicate case %q", c)
		}
		seen[c] = true
		if !IsEphemeral(c) {
			t.Errorf("IsEphemeral(%q) = false, want true (read-only)", c)
		}
	}
}
