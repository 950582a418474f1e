package glance

import (
	"testing"
)

// rootClassBypasses are issue 32's five classes (the classifier, round 4):
// commands bash runs as writers or program runners that a word-level model
// read as glances. Each class is closed at its root (the fd table, ANSI-C
// decoding and the here-document rule, POSIX bracket expressions, git's
// placeholder grammar, -C spelled only as "."). Tested as strings only,
// never run.
var rootClassBypasses = map[string][]string{
	"an fd reopened for writing": {
		`echo x 1<victim >/dev/stdout`, `echo x 1<victim >>/dev/stdout`, `cat 2<f 2>/dev/stderr`,
		`echo x 3<f 1>&3 >/dev/stdout`, `(echo x >/dev/stdout) 1<victim`, `{ echo x >/dev/stdout; } 1<victim`,
		`for i in 1; do echo x >/dev/stdout; done 1<victim`, `cat <f 1<&0 >/dev/stdout`,
		`cat 0<.git/config 1<&0 >/dev/stdout`, `{ echo x 1<&0 >/dev/stdout; } <go.mod`,
		`( cat 1<&0 >/dev/stdout ) < .git/HEAD`, `echo x 2<&0 2>/dev/stderr <f`, `echo x 1< victim >| /dev/stdout`,
		`echo x &>/dev/stdout 1<v`, `echo x &>>/dev/stdout <f 1<&0`, `cat 5<f`, `cat 1<<EOF` + "\nx\nEOF",
		`if true; then echo x >/dev/stdout; fi <f`, `for f in go.mod; do cat 1<&0 >/dev/stdout; done < go.mod`,
		`cat <<<x 1<&0 >/dev/stdout`, `{ { echo x >/dev/stdout; }; } <.git/config`, `echo x >/dev/fd/1 1<v`,
		`echo x >/proc/self/fd/1`, `echo x 1>/dev/stdout <f 1<&0`, `true | { cat >/dev/stderr; } 2<&0 <f`,
		`case x in x) echo y >/dev/stdout;; esac <f`, `cat <f >/dev/stdout`, `echo x 2</dev/null`,
		`cat 1<&0 >/dev/stdout`, `echo x 2<&0 2>>/dev/stderr`, `{ echo x >/dev/stdout; } 1>&3`, `echo x 1>&4 >/dev/stdout`,
	},
	"ANSI-C and locale quoting bash decodes apart": {
		`find . $'\x{2d}delete'`, `sort $'\x{2d}o' out in`, `git log $'\x{2d}\x{2d}output=f'`,
		`cat $'\x{2f}etc/shadow'`, `find . $'\u002ddelete'`, `find . $'\U0000002ddelete'`, `find . $'\c-delete'`,
		`sort $'\0' f`, `cat $'\x00'`, `echo $'\xff'`, `find . $'\055delete'x`, `find $'\x2e' $'\x2ddelete'`,
		`git $'\x2dc' core.pager=x log`, `sort $'-\157' out f`, `uniq $'in' $'out'`, `find . $"-delete"`,
		`find . $"\x2ddelete"`, `cat $'\q'`, `cat $'\0101'`, `echo $'\x{41}'`, `sed $'\x2di' s/a/b/ f`,
		`echo x > $'\x2fdev/sda'`, `cat < $'..\x2fx'`, `x=$'\x2ddelete'; find . $x`, `for a in $'-\x6f'; do sort $a x f; done`,
	},
	"here-documents bash ends elsewhere": {
		"cat <<true\ntru\\\ne\ntouch p\ntrue", "cat <<EOF\nEO\\\nF\nrm -rf x\nEOF",
		"cat <<-EOF\n\tE\\\nOF\ntouch p\nEOF", "cat <<'EOF'\nline\\\nEOF\nEOF", "cat <<\"EOF\"\na\\\nb\nEOF",
		"cat <<$'E'\nx\nE", "cat <<E$x\ny\nE$x", "cat <<E\"O\"F\nx\nEOF", "cat <<'E O'\nx\nE O",
		"cat <<EOF-\nx\nEOF-", "cat <<EOF\nx\\\n\nEOF",
	},
	"awk bracket expressions": {
		`awk '/[]/"]/ { system("touch p") } # "' f`, `awk '/[^]/"]/ { system("touch p") } # "' f`,
		`awk '/[[:alpha:]/"]/ { system("touch p") } # "' f`, `awk '/[]/]/ {print > "out"}' f`,
		`awk '/[^]/]/ {print | "sh"}' f`, `awk '/[[:digit:]/]/' f`, `awk '/[a\]/"]/ { system("id") } # "' f`,
		`awk '/[[.a.]/]/' f`, `awk '/[[=a=]/]/' f`, `awk '/[[:alpha:/]/' f`, `awk '/[abc/' f`, `mawk '/[]/' f`,
		`gawk '/[^]x/ {print}' f`,
	},
	"git placeholders that run a program": {
		`git log --format=%+G?`, `git log --format=%-GS`, `git log '--format=% GG'`, `git show -s --pretty=format:%+GK`,
		`git log --pretty=tformat:%-G?`, `git log '--format=%h% GS'`, `git log --format=%<(10)%G?`,
		`git for-each-ref '--format=%(signature:grade)'`, `git branch --format=%+G?`, `git log --format=%%%G?`, `git for-each-ref '--format=%(*signature)'`,
		`git log --format=sig`, `git log --pretty=mine`, `git show --format=verify HEAD`, `git log '--format=%+ -GG'`,
	},
	// Found while closing the here-document class: the parser joins a
	// backslash-newline inside a comment, bash ends the comment there.
	"a comment that hides the next line": {
		"ls # x\\\nrm -rf y", "git status #\\\ntouch p", "ls # a\\\\\\\ntouch p", "{ ls; } # c\\\nrm x",
		"ls\n# c\\\nrm x", "cat f # it's\\\ntouch p",
	},
	"git -C through a symlink": {
		`git -C x/.. status`, `git -C link/.. log`, `git -C ./x/../ status`, `git -C ./.. log`, `git -C src/../.. diff`,
		`git -C . -C x/.. status`, `git -C .././. status`,
	},
}

// rootClassReads are the everyday forms next to each class that stay
// glances: the control showing the rules refuse the class, not the verb.
var rootClassReads = []string{
	`cat < go.mod`, `wc -l < data.csv > /dev/null`, `cat go.mod >/dev/stdout`, `git status 2>/dev/stderr`,
	`{ cat < f; } > /dev/null`, `echo x >&2`, `cat go.mod 2>&1 >/dev/null`, `(cat <f) 2>/dev/null`,
	`git log --oneline 2>&1 | head`, `cat 0<go.mod`, `cat <<EOF` + "\nhello\nEOF", `cat <<'EOF'` + "\n$x\\n\nEOF",
	`cut -d$'\t' -f2 f`, `echo $'a\tb'`, `printf $'%s\n' x`, `grep $'\x41' f`, `sort -t$'\x2c' -k2 f`,
	`echo $'\101\102'`, `echo $'it\'s'`, `echo $'\e[1m'`, `cat $'my file'`,
	`awk '/[]]/' f`, `awk '/[^]]/' f`, `awk '/[[:alpha:]]+/ {print}' f`, `awk '/[a-z]/ {n++} END {print n}' f`,
	`git log --format='%h %s'`, `git log --format=%H%n%an`, `git log --pretty=fuller`, `git log --format=oneline`,
	`git log --format='%%G'`, `git for-each-ref --format='%(refname:short)'`, `git log --pretty=format:%+s`,
	`git -C . status`, `git -C ./ log -1`, `git -C .// diff`, "ls # a comment\nls -la", "ls # x\\\\\nls",
}

func TestRootClassesRefused(t *testing.T) {
	n := refuseClasses(t, rootClassBypasses)
	for class, cmds := range rootClassBypasses {
		if len(cmds) < 3 {
			t.Errorf("%s: only %d cases, want at least 3", class, len(cmds))
		}
		t.Logf("%-45s %d cases refused", class, len(cmds))
	}
	t.Logf("%d strings in %d classes refused", n, len(rootClassBypasses))
}

func TestRootClassReadsEphemeral(t *testing.T) {
	acceptAll(t, rootClassReads, map[string]bool{})
}

// TestDecodeANSIC pins the decoder to bash's values (the differential test
// checks the same against bash itself).
func TestDecodeANSIC(t *testing.T) {
	for in, want := range map[string]string{
		`a\tb`: "a\tb", `\x2d`: "-", `\x2dx`: "-x", `\x41B`: "AB", `\101`: "A", `\1012`: "A2", `\7`: "\a",
		`\e\E`: "\x1b\x1b", `\'\"\?\\`: `'"?\`, `\x7`: "\a", `\x7g`: "\ag", `plain`: "plain",
	} {
		if got, ok := decodeANSIC(in); !ok || got != want {
			t.Errorf("decodeANSIC(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{`\x{2d}`, `\u002d`, `\U0000002d`, `\c-`, `\0`, `\x00`, `\xff`, `\400`, `\q`, `\`, `\x`, `\0101`} {
		if got, ok := decodeANSIC(in); ok {
			t.Errorf("decodeANSIC(%q) = %q, want refused", in, got)
		}
	}
}
