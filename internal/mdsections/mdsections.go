// Package mdsections parses and writes the small fixed-section Markdown documents
// a flow passes between its roles (brief, goal, verdict, handoff): headings with aliases, matched
// longest first; the first non-empty duplicate wins; an unclosed code fence
// drops the rest; the placeholder "(未填)" counts as missing. ParseAll keeps
// every occurrence of a section; OwnText strips what a text quotes (fences,
// "> " lines, tagged blocks) for readers that must not take a quotation
// for the writer's own words.
//
// Lifecycle: stateless. Callers declare their sections once as a []Section
// table, call Parse on each model reply and Write/Read for files; nothing is
// cached between calls and every function is safe for concurrent use.
package mdsections

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/flowerhq/flower/internal/atomicfile"
	"github.com/flowerhq/flower/internal/redact"
)

// Section names one fixed section of a document: its Key in the parsed map,
// the canonical (byte-exact) Chinese heading Name, and the Aliases the parser
// also accepts.
type Section struct {
	Key     string
	Name    string
	Aliases []string
}

// Placeholder is what a renderer writes for an empty section. A section whose
// only content is the placeholder (copied back by a person editing the file)
// still counts as missing.
const Placeholder = "(未填)"

// placeholders are the spellings of the placeholder the parser treats as empty.
var placeholders = []string{Placeholder, "（未填）"}

// alias is one accepted spelling of a heading and the section it names.
type alias struct {
	text string
	key  string
}

// compileAliases returns every spelling of every section sorted longest first,
// so that "未知" can never swallow the head of "未知与假设".
func compileAliases(defs []Section) []alias {
	var out []alias
	for _, d := range defs {
		out = append(out, alias{d.Name, d.Key})
		for _, a := range d.Aliases {
			out = append(out, alias{a, d.Key})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		return len([]rune(out[i].text)) > len([]rune(out[j].text))
	})
	return out
}

// docLine is one line after fence stripping. verbatim lines came from inside a
// closed code fence: they are body text and never read as headings.
type docLine struct {
	text     string
	verbatim bool
}

// stripFences removes fence lines. A closed fence whose info string is empty,
// "md" or "markdown" is unwrapped (a model often wraps its whole answer in
// one); the content of any other closed fence is kept as verbatim body text.
// From an unclosed ``` or ~~~ on, everything is dropped: a truncated reply
// must not parse as complete.
func stripFences(text string) []docLine {
	raw := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var out []docLine
	open := -1 // index in out where the open fence's content starts
	var marker string
	var unwrap bool
	for _, l := range raw {
		t := strings.TrimSpace(l)
		if open < 0 {
			if m := fenceMarker(t); m != "" {
				info := strings.ToLower(strings.TrimSpace(strings.TrimLeft(t, m[:1])))
				open, marker = len(out), m
				unwrap = info == "" || info == "md" || info == "markdown"
				continue
			}
			out = append(out, docLine{text: l})
			continue
		}
		if strings.HasPrefix(t, marker) && strings.Trim(t, marker[:1]) == "" {
			open = -1
			continue
		}
		out = append(out, docLine{text: l, verbatim: !unwrap})
	}
	if open >= 0 {
		out = out[:open]
	}
	return out
}

// fenceMarker returns the fence run (``` or ~~~, three or more) opening t, or "".
func fenceMarker(t string) string {
	for _, c := range []string{"`", "~"} {
		n := 0
		for n < len(t) && t[n:n+1] == c {
			n++
		}
		if n >= 3 {
			return t[:n]
		}
	}
	return ""
}

// matchHeading reports whether line is a heading of one of the aliases and
// returns the section key and any body text that follows on the same line.
// Accepted forms: "## 目标", "**目标**", "目标:" / "目标：", "3. 边界", with
// optional 「」/【】 around the name, and body text right after the heading,
// glued on or spaced ("## 目标做 X", "**目标**做 X", "【目标】做 X",
// "目标:做 X"): a heading is a name with its glue, not a Markdown level. A bare name is a
// heading only when it is alone on its line, and a list number takes body
// text only after a colon or, for a Chinese name, a space ("3. 边界 只改
// cli.py", which a brief's rules allow), so body text that merely
// starts with a section word ("目标文件是 …", a check "1. 目标文件存在") is
// not mistaken for one.
func matchHeading(line string, aliases []alias) (key, rest string, ok bool) {
	s := strings.TrimSpace(line)
	hashes := false
	if strings.HasPrefix(s, "#") {
		s = strings.TrimLeft(s, "#")
		hashes = true
	}
	s = strings.TrimSpace(s)
	numbered := false
	if i := numberPrefix(s); i > 0 {
		s, numbered = strings.TrimSpace(s[i:]), true
	}
	bold := false
	for _, b := range []string{"**", "__"} {
		if strings.HasPrefix(s, b) {
			s, bold = strings.TrimSpace(s[len(b):]), true
			break
		}
	}
	opened := strings.HasPrefix(s, "「") || strings.HasPrefix(s, "【")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "「"), "【")
	for _, a := range aliases {
		if !hasPrefixFold(s, a.text) {
			continue
		}
		r := s[len(a.text):]
		if n := len(a.text); n > 0 && isASCIIWordEnd(a.text) && r != "" {
			if c := []rune(r)[0]; unicode.IsLetter(c) || unicode.IsDigit(c) {
				continue // "Goals" is not the heading "Goal"
			}
		}
		closed := false
		if opened && (strings.HasPrefix(r, "」") || strings.HasPrefix(r, "】")) {
			r, closed = r[len("」"):], true
		}
		if bold {
			r0 := strings.TrimSpace(r)
			for _, b := range []string{"**", "__"} {
				if strings.HasPrefix(r0, b) {
					r, closed = r0[len(b):], true
					break
				}
			}
			if !closed { // "**目标:**"
				for _, c := range []string{":", "："} {
					for _, b := range []string{"**", "__"} {
						if strings.HasPrefix(r0, c+b) {
							r, closed = r0[len(c+b):], true
						}
					}
				}
			}
		}
		spaced := r != "" && unicode.IsSpace([]rune(r)[0])
		r = strings.TrimSpace(r)
		colon := false
		for _, c := range []string{":", "："} {
			if strings.HasPrefix(r, c) {
				r, colon = strings.TrimSpace(r[len(c):]), true
				break
			}
		}
		switch {
		case r == "" && (hashes || numbered || closed || colon || !bold):
			return a.key, "", true
		case closed || colon || hashes:
			return a.key, r, true
		case numbered && spaced && !isASCIIWordEnd(a.text):
			// "3. 边界 只改 cli.py": a Chinese name set off by a space; "1.
			// 目标文件存在" (glued) and "1. Goal is met" (English prose) stay body.
			return a.key, r, true
		}
		return "", "", false
	}
	return "", "", false
}

// numberPrefix returns the length of a "3. " / "3) " / "3、" list number at
// the start of s, or 0.
func numberPrefix(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i > 2 {
		return 0
	}
	for _, p := range []string{".", ")", "、", "．"} {
		if strings.HasPrefix(s[i:], p) {
			return i + len(p)
		}
	}
	return 0
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func isASCIIWordEnd(s string) bool {
	c := s[len(s)-1]
	return c < 0x80 && (unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)))
}

// Parse splits text into the sections of defs, keyed by Section.Key. The first occurrence
// of a section that has content wins; text before the first heading is
// ignored. found reports whether any heading was seen at all.
func Parse(text string, defs []Section) (sections map[string]string, found bool) {
	all, found := ParseAll(text, defs)
	sections = map[string]string{}
	for k, bodies := range all {
		sections[k] = bodies[0]
	}
	return sections, found
}

// ParseAll is Parse keeping every occurrence: each key maps to the
// non-empty bodies of all its sections, in order. A reader that must not be
// fooled by a second, contradicting section (the verdict) reads them all.
func ParseAll(text string, defs []Section) (sections map[string][]string, found bool) {
	aliases := compileAliases(defs)
	sections = map[string][]string{}
	var cur string
	var buf []string
	flush := func() {
		if cur == "" {
			return
		}
		if body := CleanBody(strings.Join(buf, "\n")); body != "" {
			sections[cur] = append(sections[cur], body)
		}
	}
	for _, l := range stripFences(text) {
		if !l.verbatim {
			if key, rest, ok := matchHeading(l.text, aliases); ok {
				flush()
				cur, found, buf = key, true, nil
				if rest != "" {
					buf = append(buf, rest)
				}
				continue
			}
		}
		if cur != "" {
			buf = append(buf, l.text)
		}
	}
	flush()
	return sections, found
}

// OwnText is text without what it quotes: every fenced block whatever its
// info string, and every run of three or more backticks up to its closing
// run even when it opens mid-line ("汇报里写着: ```"), an unclosed one
// dropping the rest (as in Parse); every "> " quote line; and every
// <tag>…</tag> block of the given tags (an unclosed one drops the rest too).
// Parse unwraps an untagged or md fence, because a model often wraps its
// whole document in one; a reader that must tell the writer's own words
// from what it quotes (the judge's conclusion from the worker's report it
// cites) reads OwnText instead.
func OwnText(text string, tags ...string) string {
	var out []string
	fence, closing := "", "" // the open fence's run; the awaited closing tag
	for _, l := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		cut := fence != "" || closing != "" // the line starts inside a quotation
		if fence != "" {
			if fence[0] == '~' {
				if t := strings.TrimSpace(l); strings.HasPrefix(t, fence) && strings.Trim(t, "~") == "" {
					fence = ""
				}
				continue
			}
			i := strings.Index(l, fence)
			if i < 0 {
				continue
			}
			fence, l = "", strings.TrimLeft(l[i:], "`")
		}
		if closing != "" {
			i := strings.Index(l, closing)
			if i < 0 {
				continue
			}
			l, closing = l[i+len(closing):], ""
		}
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, ">") {
			continue
		}
		if m := fenceMarker(t); m != "" && m[0] == '~' {
			fence = m
			continue
		}
		var own string
		own, fence = openCode(l)
		own, closing = dropTagged(own, tags)
		if !cut && fence == "" && closing == "" || strings.TrimSpace(own) != "" {
			out = append(out, own)
		}
	}
	return strings.Join(out, "\n")
}

// openCode removes the code spans of three or more backticks from line; when
// one does not close on the line, it returns the part before it and the
// opening run, which a later line must close.
func openCode(line string) (string, string) {
	var b strings.Builder
	for {
		i := strings.Index(line, "```")
		if i < 0 {
			b.WriteString(line)
			return b.String(), ""
		}
		b.WriteString(line[:i])
		n := i
		for n < len(line) && line[n] == '`' {
			n++
		}
		run := line[i:n]
		j := strings.Index(line[n:], run)
		if j < 0 {
			return b.String(), run
		}
		line = strings.TrimLeft(line[n+j:], "`")
	}
}

// dropTagged removes <tag>…</tag> spans of line; when one opens and does
// not close on the line, it returns the part before it and the closing tag
// still awaited.
func dropTagged(line string, tags []string) (string, string) {
	for _, tag := range tags {
		open, end := "<"+tag+">", "</"+tag+">"
		for {
			i := strings.Index(line, open)
			if i < 0 {
				break
			}
			j := strings.Index(line[i:], end)
			if j < 0 {
				return line[:i], end
			}
			line = line[:i] + line[i+j+len(end):]
		}
	}
	return line, ""
}

// CleanBody trims a section body and maps the placeholder to empty.
func CleanBody(s string) string {
	s = strings.TrimSpace(s)
	for _, p := range placeholders {
		if s == p {
			return ""
		}
	}
	return s
}

// OrPlaceholder returns s trimmed, or Placeholder when s is empty.
func OrPlaceholder(s string) string {
	if strings.TrimSpace(s) == "" {
		return Placeholder
	}
	return strings.TrimSpace(s)
}

// Render is a document for people: the title as "# title" (none when
// title is ""), then each section of defs as "## Name" with its value from
// values (same order), Placeholder standing in for an empty one. Parse reads
// it back.
func Render(title string, defs []Section, values []string) string {
	var b strings.Builder
	if title != "" {
		b.WriteString("# " + title + "\n")
	}
	for i, d := range defs {
		v := ""
		if i < len(values) {
			v = values[i]
		}
		b.WriteString("\n## " + d.Name + "\n\n" + OrPlaceholder(v) + "\n")
	}
	return b.String()
}

// ListItems returns the items of a markdown list ("- x", "* x", "1. x",
// "- [ ] x"); a body without list markers gives one item per non-empty line.
func ListItems(body string) []string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		switch {
		case strings.HasPrefix(t, "- "), strings.HasPrefix(t, "* "), strings.HasPrefix(t, "+ "), strings.HasPrefix(t, "• "):
			t = strings.TrimSpace(t[strings.Index(t, " ")+1:])
		default:
			if i := numberPrefix(t); i > 0 {
				t = strings.TrimSpace(t[i:])
			}
		}
		for _, box := range []string{"[ ]", "[x]", "[X]"} {
			if strings.HasPrefix(t, box) {
				t = strings.TrimSpace(t[len(box):])
			}
		}
		if t = CleanBody(t); t != "" && !noneWords[strings.ToLower(strings.TrimRight(t, "。."))] {
			out = append(out, t)
		}
	}
	return out
}

// noneWords is how a model says an empty list.
var noneWords = map[string]bool{"无": true, "没有": true, "暂无": true, "空": true, "(无)": true, "（无）": true,
	"-": true, "—": true, "none": true, "n/a": true, "nothing": true}

// Write writes text to path (private: 0600, in folders it creates 0700),
// creating parent directories. The folder it writes in may not be a
// symlink (atomicfile.NotALink), and a symlink at path is replaced, never
// written through. Credentials are replaced first (redact.Process): a
// model's text may quote one.
func Write(path, text string) error {
	text = redact.Process().String(text)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("mdsections: write %s: %w", path, err)
	}
	if err := atomicfile.NotALink(filepath.Dir(path)); err != nil {
		return fmt.Errorf("mdsections: write %s: %w", path, err)
	}
	if err := atomicfile.Write(path, []byte(text), 0o600); err != nil {
		return fmt.Errorf("mdsections: write %s: %w", path, err)
	}
	return nil
}

// Read reads path; a missing file wraps fs.ErrNotExist.
func Read(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("mdsections: read %s: %w", path, err)
	}
	return string(b), nil
}
