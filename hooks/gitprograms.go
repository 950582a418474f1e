package hooks

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flowerhq/flower/glance"
)

// A glance never runs a program the workspace names. git's program keys
// that the sandbox's environment can neutralise are set there (gitNeutral);
// the ones below name a driver or a command per repository and cannot be
// reset from the command line scope on git 2.39 (an empty textconv, filter
// or diff command is run, not skipped), so a git glance in a repository
// whose own config sets one is refused instead: repoPrograms reads that
// config as git does, without running anything.

// gitRunsRepoPrograms refuses a glance that runs git in a repository
// whose own config names a program git would run (repoPrograms, from the
// call's cwd, else the hook's). A glance that runs no git reads no
// config: the parse is cheaper than the files on flower-hook's every call.
func gitRunsRepoPrograms(in Input, cmd string, h host) (Decision, bool) {
	if !glance.RunsGit(cmd) {
		return Decision{}, false
	}
	cwd, getenv := h.repoEnv()
	dir := in.Cwd
	if dir == "" {
		dir = cwd
	}
	keys, err := repoPrograms(dir, getenv)
	if len(keys) == 0 && err == nil {
		return Decision{}, false
	}
	why := strings.Join(keys, ", ")
	if err != nil {
		why = strings.TrimSpace(strings.Join(append(keys, "git 读不了的配置: "+err.Error()), ", "))
	}
	return Decision{Verdict: Deny, Reason: repoProgramsText + "(" + why + ")",
		Detail: map[string]any{"glance": true, "repo_programs": keys}}, true
}

// repoProgramsText is the deny text of a git glance in a repository whose
// own config names programs (Chinese, like every model-facing text).
const repoProgramsText = "这个仓库自己的 git 配置指定了 git 在这次查看时会运行的程序,查看从不运行工作区指定的程序:改为派一个 subagent 去看。"

// gitProgramKey reports a config key (section.subsection.name, section and
// name lowercased) that makes a git glance run a program the repository
// names: diff drivers' command and textconv (git diff, show, log -p, blame),
// diff.external, filters' clean, smudge and process (git status and diff
// run clean on files whose stat changed), core.gitProxy and a remote's
// uploadpack (git ls-remote runs them locally).
func gitProgramKey(key string) bool {
	sec, rest, _ := strings.Cut(key, ".")
	i := strings.LastIndexByte(rest, '.')
	sub, name := "", rest
	if i >= 0 {
		sub, name = rest[:i], rest[i+1:]
	}
	switch sec {
	case "diff":
		return sub != "" && (name == "command" || name == "textconv") || sub == "" && name == "external"
	case "filter":
		return sub != "" && (name == "clean" || name == "smudge" || name == "process")
	case "core":
		return sub == "" && name == "gitproxy"
	case "remote":
		return sub != "" && name == "uploadpack"
	}
	return false
}

// maxIncludeDepth is git's own bound on nested includes.
const maxIncludeDepth = 10

// repoPrograms returns the program keys (gitProgramKey) set by the config of
// the repository git would use in dir: its config, config.worktree, the
// common dir's config (a linked worktree), every submodule's config under
// the common dir's modules/, and every file they include (include.path and
// every includeIf.*.path, whatever its condition: taking one in that git
// would skip only refuses more). getenv gives GIT_DIR (git then uses it)
// and HOME (for ~/ in include paths). A config file git could not parse is
// reported as such: git would refuse to run, and the glance is refused.
// No repository: nothing.
func repoPrograms(dir string, getenv func(string) string) ([]string, error) {
	gitDir := getenv("GIT_DIR")
	if gitDir != "" && !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(dir, gitDir)
	}
	if gitDir == "" {
		gitDir = findGitDir(dir)
	}
	if gitDir == "" {
		return nil, nil
	}
	common := gitDir
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		if c := strings.TrimSpace(string(b)); filepath.IsAbs(c) {
			common = c
		} else {
			common = filepath.Join(gitDir, c)
		}
	}
	files := []string{filepath.Join(gitDir, "config"), filepath.Join(gitDir, "config.worktree")}
	if common != gitDir {
		files = append(files, filepath.Join(common, "config"))
	}
	files = append(files, moduleConfigs(filepath.Join(common, "modules"), 0)...)
	r := configReader{home: getenv("HOME")}
	for _, f := range files {
		if err := r.read(f, 0); err != nil {
			return r.found, err
		}
	}
	return r.found, nil
}

// findGitDir is the git directory git's discovery finds from dir: the
// first folder upwards holding .git (a folder, or a file "gitdir: X"), or
// being a repository itself (a bare one: HEAD, objects/ and refs/).
func findGitDir(dir string) string {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		dot := filepath.Join(d, ".git")
		if st, err := os.Stat(dot); err == nil {
			if st.IsDir() {
				return dot
			}
			if b, err := os.ReadFile(dot); err == nil {
				if g, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:"); ok {
					g = strings.TrimSpace(g)
					if !filepath.IsAbs(g) {
						g = filepath.Join(d, g)
					}
					return g
				}
			}
		}
		if isGitDir(d) {
			return d
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

func isGitDir(d string) bool {
	for _, p := range []string{"objects", "refs"} {
		if st, err := os.Stat(filepath.Join(d, p)); err != nil || !st.IsDir() {
			return false
		}
	}
	_, err := os.Stat(filepath.Join(d, "HEAD"))
	return err == nil
}

// moduleConfigs lists the config files of the submodules' git directories
// under modules (nested submodules live in modules/X/modules/Y).
func moduleConfigs(modules string, depth int) []string {
	if depth > 8 {
		return nil
	}
	ents, err := os.ReadDir(modules)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		d := filepath.Join(modules, e.Name())
		if isGitDir(d) {
			out = append(out, filepath.Join(d, "config"), filepath.Join(d, "config.worktree"))
			out = append(out, moduleConfigs(filepath.Join(d, "modules"), depth+1)...)
			continue
		}
		// A submodule named a/b keeps its git directory at modules/a/b.
		out = append(out, moduleConfigs(d, depth+1)...)
	}
	return out
}

// errBadConfig is a config file git would refuse to read.
var errBadConfig = errors.New("bad git config")

// configReader collects program keys over a config file and its includes.
type configReader struct {
	home  string
	found []string
}

// read parses one config file (missing: nothing, as for git) and follows
// its includes.
func (r *configReader) read(path string, depth int) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	if depth > maxIncludeDepth {
		return errors.New("git config includes nest too deep at " + path)
	}
	var includes []string
	err = parseGitConfig(data, func(key, value string, hasValue bool) {
		if gitProgramKey(key) && !slices.Contains(r.found, key) {
			r.found = append(r.found, key)
		}
		sec, _, _ := strings.Cut(key, ".")
		if hasValue && strings.HasSuffix(key, ".path") && (key == "include.path" || sec == "includeif") {
			includes = append(includes, value)
		}
	})
	if err != nil {
		return errors.Join(err, errors.New("in "+path))
	}
	for _, inc := range includes {
		switch {
		case strings.HasPrefix(inc, "~/") && r.home != "":
			inc = filepath.Join(r.home, inc[2:])
		case !filepath.IsAbs(inc):
			inc = filepath.Join(filepath.Dir(path), inc)
		}
		if err := r.read(inc, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// parseGitConfig walks a git config file as git 2.39's config.c does
// (git_parse_source, get_base_var, get_value, parse_value) and calls fn
// with every key (section and name lowercased; a quoted subsection kept,
// a [section.sub] one lowercased) and its value. Anything git refuses is
// errBadConfig.
func parseGitConfig(data []byte, fn func(key, value string, hasValue bool)) error {
	p := cfgScanner{data: data}
	if len(data) >= 3 && string(data[:3]) == "\xef\xbb\xbf" {
		p.i = 3
	}
	section := ""
	for {
		c, eof := p.next()
		switch {
		case c == '\n':
			if eof {
				return nil
			}
		case isCfgSpace(c):
		case c == '#' || c == ';':
			p.skipLine()
		case c == '[':
			s, ok := p.sectionHeader()
			if !ok || s == "" {
				return errBadConfig
			}
			section = s
		case isAlpha(c):
			name, value, hasValue, ok := p.keyValue(c)
			if !ok {
				return errBadConfig
			}
			if section != "" { // git takes a key before any section as is
				name = section + "." + name
			}
			fn(name, value, hasValue)
		default:
			return errBadConfig
		}
	}
}

// cfgScanner reads a config file byte by byte as git's get_next_char does:
// "\r\n" is "\n", and the end of the file is a final "\n".
type cfgScanner struct {
	data []byte
	i    int
}

func (p *cfgScanner) next() (c byte, eof bool) {
	if p.i >= len(p.data) {
		return '\n', true
	}
	c = p.data[p.i]
	p.i++
	if c == '\r' && p.i < len(p.data) && p.data[p.i] == '\n' {
		p.i++
		return '\n', false
	}
	return c, false
}

// skipLine reads to the end of a comment line (at the end of the file,
// the caller's next read sees the end again).
func (p *cfgScanner) skipLine() {
	for {
		if c, _ := p.next(); c == '\n' {
			return
		}
	}
}

// sectionHeader reads after "[": "name]" or "name \"sub\"]"; the name is
// key characters and dots, lowercased.
func (p *cfgScanner) sectionHeader() (string, bool) {
	var b strings.Builder
	for {
		c, eof := p.next()
		switch {
		case eof:
			return "", false
		case c == ']':
			return b.String(), true
		case isCfgSpace(c):
			return p.extendedHeader(&b, c)
		case !isKeyChar(c) && c != '.':
			return "", false
		}
		b.WriteByte(lower(c))
	}
}

// extendedHeader reads the quoted subsection of `[name "sub"]`: \x is x,
// a newline inside is an error, and "]" must follow the closing quote.
func (p *cfgScanner) extendedHeader(b *strings.Builder, c byte) (string, bool) {
	for isCfgSpace(c) {
		if c == '\n' {
			return "", false
		}
		c, _ = p.next()
	}
	if c != '"' {
		return "", false
	}
	b.WriteByte('.')
	for {
		c, _ := p.next()
		if c == '\n' {
			return "", false
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			if c, _ = p.next(); c == '\n' {
				return "", false
			}
		}
		b.WriteByte(c)
	}
	if c, _ := p.next(); c != ']' {
		return "", false
	}
	return b.String(), true
}

// keyValue reads a key starting with first, then " = value" or nothing (a
// boolean true), as get_value and parse_value do.
func (p *cfgScanner) keyValue(first byte) (name, value string, hasValue, ok bool) {
	var b strings.Builder
	b.WriteByte(lower(first))
	c, eof := p.next()
	for !eof && isKeyChar(c) {
		b.WriteByte(lower(c))
		c, eof = p.next()
	}
	for c == ' ' || c == '\t' {
		c, _ = p.next()
	}
	if c == '\n' {
		return b.String(), "", false, true
	}
	if c != '=' {
		return "", "", false, false
	}
	value, ok = p.value()
	return b.String(), value, true, ok
}

// value is parse_value: quotes toggle, a comment ends the value outside
// quotes, inner runs of blanks are one space, \t \b \n \\ \" and
// backslash-newline are the only escapes.
func (p *cfgScanner) value() (string, bool) {
	var b strings.Builder
	quote, comment, space := false, false, 0
	for {
		c, _ := p.next()
		switch {
		case c == '\n':
			return b.String(), !quote
		case comment:
			continue
		case isCfgSpace(c) && !quote:
			if b.Len() > 0 {
				space++
			}
			continue
		case !quote && (c == ';' || c == '#'):
			comment = true
			continue
		}
		for ; space > 0; space-- {
			b.WriteByte(' ')
		}
		switch c {
		case '\\':
			c, _ = p.next()
			switch c {
			case '\n':
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", false
			}
			b.WriteByte(c)
		case '"':
			quote = !quote
		default:
			b.WriteByte(c)
		}
	}
}

// isCfgSpace is git's isspace (sane_ctype GIT_SPACE): space, tab, newline,
// carriage return.
func isCfgSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isKeyChar(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' || c == '-' }

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
