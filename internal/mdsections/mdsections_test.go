package mdsections

import (
	"errors"
	"io/fs"
	"path/filepath"
	"reflect"
	"testing"
)

// testDefs mirrors the brief's table: a long alias (未知与假设) that shares
// its head with a short one (未知), a later section whose name starts with an
// earlier alias (验收清单 / 验收), and an English alias that is the head of
// a longer English word (Goal / Goals).
var testDefs = []Section{
	{Key: "goal", Name: "目标", Aliases: []string{"目的", "Goal"}},
	{Key: "accept", Name: "验收标准", Aliases: []string{"验收", "Acceptance criteria"}},
	{Key: "bounds", Name: "边界", Aliases: []string{"范围"}},
	{Key: "unknowns", Name: "未知与假设", Aliases: []string{"假设", "未知"}},
	{Key: "checks", Name: "验收清单"}, // a later section whose name starts with 验收
}

func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  map[string]string
		found bool
	}{
		{"## heading", "## 目标\nx", map[string]string{"goal": "x"}, true},
		{"**heading**", "**目标**\nx", map[string]string{"goal": "x"}, true},
		{"heading with colon", "目标:\nx", map[string]string{"goal": "x"}, true},
		{"heading with full-width colon", "目标：\nx", map[string]string{"goal": "x"}, true},
		{"numbered heading", "3. 边界\nx", map[string]string{"bounds": "x"}, true},
		{"numbered heading 3、", "3、边界\nx", map[string]string{"bounds": "x"}, true},
		{"numbered heading with text after a space", "1. 目标 改 cli.py\n3. 边界 只改 cli.py", map[string]string{"goal": "改 cli.py", "bounds": "只改 cli.py"}, true},
		{"numbered heading with text after a full-width space", "3、边界\u3000只改 cli.py", map[string]string{"bounds": "只改 cli.py"}, true},
		{"numbered heading with text after a colon", "3. 边界: 只改 cli.py", map[string]string{"bounds": "只改 cli.py"}, true},
		{"a glued numbered line is body", "## 目标\nG\n1. 目标文件存在", map[string]string{"goal": "G\n1. 目标文件存在"}, true},
		{"a numbered English sentence is body", "## 目标\nG\n1. Goal is met", map[string]string{"goal": "G\n1. Goal is met"}, true},
		{"an unnumbered word and a space is body", "## 目标\nG\n边界 很清楚", map[string]string{"goal": "G\n边界 很清楚"}, true},
		{"body after ## heading", "## 目标 做 X", map[string]string{"goal": "做 X"}, true},
		{"body after colon", "目标: 做 X\n验收标准: 能加", map[string]string{"goal": "做 X", "accept": "能加"}, true},
		{"body after **heading**", "**目标** 做 X", map[string]string{"goal": "做 X"}, true},
		{"body after **heading:**", "**目标:** 做 X", map[string]string{"goal": "做 X"}, true},
		{"【】 around the name", "【目标】\nG", map[string]string{"goal": "G"}, true},
		{"「」 around the name", "## 「边界」\nB", map[string]string{"bounds": "B"}, true},
		{"bare word starting a body line is no heading", "## 目标\n目标文件是 a.txt", map[string]string{"goal": "目标文件是 a.txt"}, true},
		{"longest alias first", "## 未知与假设\nU", map[string]string{"unknowns": "U"}, true},
		{"short alias", "## 未知\nU", map[string]string{"unknowns": "U"}, true},
		{"longest first across sections", "## 验收\nA\n## 验收清单\nC", map[string]string{"accept": "A", "checks": "C"}, true},
		{"English alias, case folded", "## acceptance CRITERIA\nA", map[string]string{"accept": "A"}, true},
		{"Goals is not the heading Goal", "## Goals\nG", map[string]string{}, false},
		{"first duplicate with content wins", "## 目标\nfirst\n## 目标\nsecond", map[string]string{"goal": "first"}, true},
		{"empty first duplicate loses", "## 目标\n\n## 目标\nsecond", map[string]string{"goal": "second"}, true},
		{"placeholder is empty", "## 目标\n(未填)\n## 边界\nB", map[string]string{"bounds": "B"}, true},
		{"full-width placeholder is empty", "## 目标\n（未填）", map[string]string{}, true},
		{"unclosed ``` drops the rest", "## 目标\nG\n```python\nprint(1)\n## 验收标准\nA", map[string]string{"goal": "G"}, true},
		{"unclosed ~~~ drops the rest", "## 目标\nG\n~~~\n## 边界\nB", map[string]string{"goal": "G"}, true},
		{"closed markdown fence is unwrapped", "```markdown\n## 目标\nG\n## 边界\nB\n```", map[string]string{"goal": "G", "bounds": "B"}, true},
		{"headings inside a code fence are body", "## 目标\nG\n```python\n# 边界\n```\n", map[string]string{"goal": "G\n# 边界"}, true},
		{"CRLF line ends", "## 目标\r\nG\r\n## 边界\r\nB", map[string]string{"goal": "G", "bounds": "B"}, true},
		{"preamble is ignored", "好的:\n## 目标\nG", map[string]string{"goal": "G"}, true},
		{"nothing recognizable", "just prose", map[string]string{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found := Parse(tt.in, testDefs)
			if !reflect.DeepEqual(got, tt.want) || found != tt.found {
				t.Errorf("Parse(%q) = %q, %v; want %q, %v", tt.in, got, found, tt.want, tt.found)
			}
		})
	}
}

// TestParseAll keeps every occurrence, in order; Parse is its first.
func TestParseAll(t *testing.T) {
	in := "## 目标\nfirst\n## 边界\nB\n## 目标\n\n## 目标\nsecond"
	all, found := ParseAll(in, testDefs)
	if !found || !reflect.DeepEqual(all, map[string][]string{"goal": {"first", "second"}, "bounds": {"B"}}) {
		t.Errorf("ParseAll = %q, %v", all, found)
	}
	if p, _ := Parse(in, testDefs); p["goal"] != "first" {
		t.Errorf("Parse = %q", p)
	}
}

// TestOwnText: fences of every kind, quote lines and tagged blocks are
// dropped; the writer's own lines stay.
func TestOwnText(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"untagged fence", "a\n```\n## 结论\n已达成\n```\nb", "a\nb"},
		{"md fence", "a\n```markdown\n## 结论\n已达成\n```\nb", "a\nb"},
		{"tilde fence", "a\n~~~\nx\n~~~\nb", "a\nb"},
		{"longer fence closes only on its own run", "a\n````\n```\nx\n````\nb", "a\nb"},
		{"unclosed fence drops the rest", "a\n```\n## 结论\n已达成", "a"},
		{"quote lines", "a\n> ## 结论\n  > 已达成\nb", "a\nb"},
		{"tagged block on one line", "a <自述>已达成</自述> b", "a  b"},
		{"tagged block over lines", "a\n<自述>\n## 结论\n已达成\n</自述> b\nc", "a\n b\nc"},
		{"unclosed tag drops the rest", "a\n<自述>\n已达成", "a"},
		{"untouched", "## 结论\n未达成", "## 结论\n未达成"},
		{"a fence opened mid-line", "汇报里写着: ```\n## 结论\n已达成\n```\n但不在", "汇报里写着: \n但不在"},
		{"a code span of three backticks on one line", "a ```已达成``` b", "a  b"},
		{"text after the closing run stays", "```\nx\n``` b", " b"},
	}
	for _, tt := range tests {
		if got := OwnText(tt.in, "自述"); got != tt.want {
			t.Errorf("%s: OwnText(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestListItems(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"markers", "- a\n* b\n+ c\n• d\n1. e\n2) f", []string{"a", "b", "c", "d", "e", "f"}},
		{"checkboxes", "- [ ] a\n- [x] b\n- [X] c", []string{"a", "b", "c"}},
		{"plain lines", "a\n\nb", []string{"a", "b"}},
		{"无 is an empty list", "无", nil},
		{"none. is an empty list", "- None.", nil},
		{"空, -, (无) are empty lists", "空\n-\n- （无）\n(无)", nil},
		{"anything else is an item", "- 全部通过", []string{"全部通过"}},
		{"placeholder item is dropped", "- (未填)\n- a", []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ListItems(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ListItems(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestCleanBodyOrPlaceholder(t *testing.T) {
	tests := []struct{ in, clean, or string }{
		{"", "", Placeholder},
		{"  x \n", "x", "x"},
		{"(未填)", "", "(未填)"},
		{" （未填） ", "", "（未填）"},
	}
	for _, tt := range tests {
		if got := CleanBody(tt.in); got != tt.clean {
			t.Errorf("CleanBody(%q) = %q, want %q", tt.in, got, tt.clean)
		}
		if got := OrPlaceholder(tt.in); got != tt.or {
			t.Errorf("OrPlaceholder(%q) = %q, want %q", tt.in, got, tt.or)
		}
	}
}

func TestWriteRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes", "sub", "需求.md")
	if err := Write(path, "## 目标\nG\n"); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil || got != "## 目标\nG\n" {
		t.Errorf("Read = %q, %v", got, err)
	}
	if _, err := Read(filepath.Join(t.TempDir(), "none.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read(missing) err = %v, want fs.ErrNotExist", err)
	}
	blocker := filepath.Join(t.TempDir(), "file")
	if err := Write(blocker, "x"); err != nil {
		t.Fatal(err)
	}
	if err := Write(filepath.Join(blocker, "child.md"), "x"); err == nil {
		t.Error("Write under a regular file succeeded")
	}
}

// TestRenderParses: Render writes the title, every section in table order
// with the placeholder for an empty one, and Parse reads the values back.
func TestRenderParses(t *testing.T) {
	values := []string{" G ", "", "B", "U"}
	got := Render("需求", testDefs, values)
	want := "# 需求\n\n## 目标\n\nG\n\n## 验收标准\n\n(未填)\n\n## 边界\n\nB\n\n## 未知与假设\n\nU\n\n## 验收清单\n\n(未填)\n"
	if got != want {
		t.Errorf("Render =\n%s\nwant\n%s", got, want)
	}
	parsed, found := Parse(got, testDefs)
	if !found {
		t.Fatal("Parse found no section in Render's output")
	}
	for i, d := range testDefs {
		v := ""
		if i < len(values) {
			v = values[i]
		}
		if CleanBody(parsed[d.Key]) != CleanBody(v) {
			t.Errorf("section %s: parsed %q, rendered %q", d.Name, parsed[d.Key], v)
		}
	}
	if got := Render("", testDefs[:1], []string{"x"}); got != "\n## 目标\n\nx\n" {
		t.Errorf("Render without title = %q", got)
	}
}
