package flow

import (
	"errors"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Every rule of the brief's format (sections, aliases, headings, fences)
// has a row here.
func TestParseBrief(t *testing.T) {
	full := "## 目标\nG\n## 验收标准\nA\n## 边界\nB\n## 未知与假设\nU\n"
	tests := []struct {
		name string
		in   string
		want Brief
	}{
		{"four sections, fixed order", full, Brief{Goal: "G", Accept: "A", Bounds: "B", Unknowns: "U"}},
		{"heading ## 目标", "## 目标\nx", Brief{Goal: "x"}},
		{"heading **目标**", "**目标**\nx", Brief{Goal: "x"}},
		{"heading 目标:", "目标:\nx", Brief{Goal: "x"}},
		{"heading 目标：full-width colon", "目标：\nx", Brief{Goal: "x"}},
		{"heading 3. 边界", "3. 边界\nx", Brief{Bounds: "x"}},
		{"body right after ## heading", "## 目标 做一个计算器", Brief{Goal: "做一个计算器"}},
		{"body right after colon", "目标: 做一个计算器\n验收标准: 能加减", Brief{Goal: "做一个计算器", Accept: "能加减"}},
		{"body right after **heading**", "**目标** 做一个计算器", Brief{Goal: "做一个计算器"}},
		{"body right after **heading:**", "**目标:** 做一个计算器", Brief{Goal: "做一个计算器"}},
		{"body glued onto ## heading", "## 目标做一个计算器\n## 边界不改接口", Brief{Goal: "做一个计算器", Bounds: "不改接口"}},
		{"body glued onto **heading**", "**目标**做一个计算器", Brief{Goal: "做一个计算器"}},
		{"body glued onto 【heading】", "【目标】做一个计算器\n「边界」不改接口", Brief{Goal: "做一个计算器", Bounds: "不改接口"}},
		{"body glued onto a colon", "目标:做一个计算器", Brief{Goal: "做一个计算器"}},
		{"glued ASCII alias is a different word", "## Goalkeeper\nx", Brief{}},
		{"a numbered check starting with a section word is body", "## 验收标准\n1. 目标文件存在\n2. 边界值有测试", Brief{Accept: "1. 目标文件存在\n2. 边界值有测试"}},
		{"bare word starting a body line is no heading", "## 目标\n目标文件是 a.txt", Brief{Goal: "目标文件是 a.txt"}},
		{"aliases longest first: 未知与假设 is not 未知", "## 未知与假设\nU", Brief{Unknowns: "U"}},
		{"short alias 未知 still works", "## 未知\nU", Brief{Unknowns: "U"}},
		{"first duplicate with content wins", "## 目标\nfirst\n## 目标\nsecond", Brief{Goal: "first"}},
		{"empty first duplicate loses to later content", "## 目标\n\n## 目标\nsecond", Brief{Goal: "second"}},
		{"placeholder (未填) counts as missing", "## 目标\n(未填)\n## 边界\nB", Brief{Bounds: "B"}},
		{"full-width placeholder counts as missing", "## 目标\n（未填）", Brief{}},
		{"unclosed fence drops everything after it", "## 目标\nG\n```python\nprint(1)\n## 验收标准\nA", Brief{Goal: "G"}},
		{"unclosed ~~~ fence drops everything after it", "## 目标\nG\n~~~\n## 边界\nB", Brief{Goal: "G"}},
		{"closed markdown fence is unwrapped", "```markdown\n## 目标\nG\n## 边界\nB\n```", Brief{Goal: "G", Bounds: "B"}},
		{"headings inside a code fence are body", "## 目标\nG\n```python\n# 边界\n```\n", Brief{Goal: "G\n# 边界"}},
		{"preamble before the first heading is ignored", "好的,这是需求:\n## 目标\nG", Brief{Goal: "G"}},
		{"【】 around the name", "【目标】\nG", Brief{Goal: "G"}},
		{"English alias", "## Acceptance criteria\nA", Brief{Accept: "A"}},
		{"nothing recognizable", "just prose", Brief{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseBrief(tt.in)
			if !got.equal(tt.want) {
				t.Errorf("ParseBrief(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

// A truncated model reply must not pass the gate.
func TestBriefTruncatedIsIncomplete(t *testing.T) {
	b := ParseBrief("## 目标\nG\n## 验收标准\nA\n```go\nfunc main() {\n## 边界\nB\n## 未知与假设\nU")
	if b.Complete() {
		t.Fatalf("truncated reply parsed complete: %+v", b)
	}
	if got, want := b.Missing(), []string{"边界", "未知与假设"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Missing() = %v, want %v", got, want)
	}
}

func TestBriefMissingComplete(t *testing.T) {
	tests := []struct {
		b    Brief
		want []string
	}{
		{Brief{}, []string{"目标", "验收标准", "边界", "未知与假设"}},
		{Brief{Goal: "g", Accept: "a", Bounds: "b", Unknowns: "u"}, nil},
		{Brief{Goal: "g", Accept: " ", Bounds: "(未填)", Unknowns: "u"}, []string{"验收标准", "边界"}},
	}
	for _, tt := range tests {
		if got := tt.b.Missing(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%+v.Missing() = %v, want %v", tt.b, got, tt.want)
		}
		if got := tt.b.Complete(); got != (tt.want == nil) {
			t.Errorf("%+v.Complete() = %v", tt.b, got)
		}
	}
}

// ToMarkdown writes "(未填)" for empty sections; copying it back keeps the
// section missing; a full brief round-trips through Write/Load.
func TestBriefMarkdownRoundTrip(t *testing.T) {
	half := Brief{Goal: "做 X", Bounds: "不碰 Y"}
	md := half.ToMarkdown()
	for _, s := range []string{"## 目标", "## 验收标准", "## 边界", "## 未知与假设", "(未填)"} {
		if !strings.Contains(md, s) {
			t.Errorf("ToMarkdown lacks %q:\n%s", s, md)
		}
	}
	if back := ParseBrief(md); !back.equal(half) || back.Complete() {
		t.Errorf("round trip of half brief = %+v", back)
	}
	full := Brief{Goal: "做 X\n第二行", Accept: "- 能跑\n- 有测试", Bounds: "不碰 Y", Unknowns: "假设用 Go"}
	path := filepath.Join(t.TempDir(), "notes", "需求.md")
	w, err := full.Write(path)
	if err != nil || w.Path != path {
		t.Fatalf("Write = %+v, %v", w, err)
	}
	got, err := LoadBrief(path)
	if err != nil || !got.equal(full) || got.Path != path {
		t.Errorf("LoadBrief = %+v, %v; want %+v", got, err, full)
	}
	if _, err := LoadBrief(filepath.Join(t.TempDir(), "none.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadBrief(missing) err = %v, want fs.ErrNotExist", err)
	}
	pb := full.PromptBlock()
	for _, s := range []string{"【目标】", "【验收标准】", "【边界】", "【未知与假设】", "假设用 Go"} {
		if !strings.Contains(pb, s) {
			t.Errorf("PromptBlock lacks %q", s)
		}
	}
}

func TestBriefAmend(t *testing.T) {
	b := Brief{Goal: "做 X", Accept: "a", Bounds: "b", Unknowns: "u"}
	a := b.Amend("还要支持 Y", "唤醒时追加")
	if !strings.Contains(a.Goal, "【唤醒时追加】还要支持 Y") || !a.Complete() {
		t.Errorf("Amend goal = %q", a.Goal)
	}
	if again := a.Amend("还要支持 Y", "唤醒时追加"); again != a {
		t.Errorf("amending twice changed the brief: %q", again.Goal)
	}
}

func TestParseGoal(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  Goal
		unver int
	}{
		{"statement and list", "## 目标\n做 X\n## 检查清单\n- a 存在\n- [ ] b 能跑\n1. c 通过", Goal{Statement: "做 X", Checks: []string{"a 存在", "b 能跑", "c 通过"}}, 0},
		{"unverifiable items", "## 目标\nX\n## 检查清单\n- [此环境无法验证:需要 macOS] 在 mac 上能跑\n- ok", Goal{Statement: "X", Checks: []string{"[此环境无法验证:需要 macOS] 在 mac 上能跑", "ok"}}, 1},
		{"full-width unverifiable mark", "## 目标\nX\n## 检查清单\n- ［此环境无法验证：无网络］联网", Goal{Statement: "X", Checks: []string{"［此环境无法验证：无网络］联网"}}, 1},
		{"mark after the check's text", "## 目标\nX\n## 检查清单\n- 在 mac 上能跑 [此环境无法验证:没有 macOS]\n- ok", Goal{Statement: "X", Checks: []string{"在 mac 上能跑 [此环境无法验证:没有 macOS]", "ok"}}, 1},
		{"mark in the middle, full width", "## 目标\nX\n## 检查清单\n- 联网下载 ［此环境无法验证：无网络］ 后校验", Goal{Statement: "X", Checks: []string{"联网下载 ［此环境无法验证：无网络］ 后校验"}}, 1},
		{"the words without the bracket mark are no mark", "## 目标\nX\n## 检查清单\n- 此环境无法验证的项目要写明", Goal{Statement: "X", Checks: []string{"此环境无法验证的项目要写明"}}, 0},
		{"legacy title line of an older goal file is no section", "# 目标与检查清单\n\n## 目标\nX\n## 检查清单\n- a", Goal{Statement: "X", Checks: []string{"a"}}, 0},
		{"no checks is incomplete", "## 目标\nX", Goal{Statement: "X"}, 0},
		{"无 is an empty list", "## 目标\nX\n## 检查清单\n无", Goal{Statement: "X"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseGoal(tt.in)
			if got.Statement != tt.want.Statement || !reflect.DeepEqual(got.Checks, tt.want.Checks) {
				t.Errorf("ParseGoal = %+v, want %+v", got, tt.want)
			}
			if n := len(got.Unverifiable()); n != tt.unver {
				t.Errorf("Unverifiable = %d, want %d", n, tt.unver)
			}
			if got.Complete() != (tt.want.Statement != "" && len(tt.want.Checks) > 0) {
				t.Errorf("Complete = %v", got.Complete())
			}
		})
	}
}

func TestGoalAmendWriteLoad(t *testing.T) {
	g := Goal{Statement: "做 X", Checks: []string{"a", "b"}}
	a := g.Amend("改成做 Y")
	if !strings.Contains(a.Statement, "【修订】改成做 Y") || !reflect.DeepEqual(a.Checks, g.Checks) {
		t.Errorf("Amend = %+v", a)
	}
	a.Checks[0] = "changed"
	if g.Checks[0] != "a" {
		t.Error("Amend shares the checks slice with the original")
	}
	path := filepath.Join(t.TempDir(), "目标.md")
	w, err := g.Write(path)
	if err != nil || w.Path != path {
		t.Fatal(err)
	}
	back, err := LoadGoal(path)
	if err != nil || back.Statement != g.Statement || !reflect.DeepEqual(back.Checks, g.Checks) {
		t.Errorf("LoadGoal = %+v, %v", back, err)
	}
	if md := (Goal{}).ToMarkdown(); ParseGoal(md).Complete() {
		t.Error("an empty goal's markdown parses complete")
	}
}

// ParseVerdict's rules one by one (the corpus in verdict_test.go holds it
// to judge texts as models and attackers write them).
func TestParseVerdict(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		state  string
		failed []string
	}{
		{"1. 结论 section", "## 结论\n已达成\n## 理由\n都过了\n## 未通过\n无", Achieved, nil},
		{"1. 判定 alias", "## 判定\n未达成\n## 理由\nr\n## 未通过\n- 测试挂了", NotYet, []string{"测试挂了"}},
		{"2. bare 1", " 1 \n", Achieved, nil},
		{"2. bare true", "true", Achieved, nil},
		{"2. stripped: true with spaces", " \ntrue\t", Achieved, nil},
		{"2. positive forms ignore case: True", "True", Achieved, nil},
		{"2. FALSE is no", "FALSE", NotYet, nil},
		{"2. true as the conclusion", "## 结论\ntrue", Achieved, nil},
		{"2. bare 0", "0", NotYet, nil},
		{"2. bare false", "false", NotYet, nil},
		{"2. exactly one form: 10 is not 1", "10", NotYet, nil},
		{"3. a verdict with an explanation is not exactly a form", "目标已达成。看了一下,两个文件都在。", NotYet, nil},
		{"3. prose that does not open with its verdict is not achieved", "看了一下,目标已达成。", NotYet, nil},
		{"3. longer word first: 未达成 is not 达成", "结果: 未达成", NotYet, nil},
		{"3. 未通过 is not 通过", "检查未通过", NotYet, nil},
		{"3. not achieved is not achieved", "The goal is not achieved yet", NotYet, nil},
		{"3. 无法验证 → unreachable", "## 结论\n无法验证(需要 macOS)", Unreachable, nil},
		{"3. 没法验证 → unreachable", "没法验证", Unreachable, nil},
		{"3. 验证不了 → unreachable", "这里验证不了", Unreachable, nil},
		{"3. 无法判定 → unreachable", "无法判定", Unreachable, nil},
		{"3. unverifiable → unreachable", "unverifiable here", Unreachable, nil},
		{"3. longer word first at the same place: 还没法验证 is not 还没", "这里还没法验证", Unreachable, nil},
		{"3. longer word first at the same place: 通过不了 is not 通过", "通过不了", NotYet, nil},
		{"3. longest word decides, not the leftmost hit", "未达成;部分无法验证", Unreachable, nil},
		{"3. hedged pass (cannot verify) → unreachable", "通过,但 macOS 上无法验证", Unreachable, nil},
		{"3. hedged pass in the 结论 section → unreachable", "## 结论\n通过,但 macOS 上无法验证\n## 理由\n看了源码分支", Unreachable, nil},
		{"3. hedged pass, English → unreachable", "passed, but cannot be verified on macOS here", Unreachable, nil},
		{"3. hedged pass, 已达成 + 验证不了 → unreachable", "## 结论\n已达成(Linux 容器里验证不了 macOS 分支)", Unreachable, nil},
		{"3. hedged pass, 没法验证 after the pass → unreachable", "整体通过。iOS 部分没法验证。", Unreachable, nil},
		{"3. plain pass stays achieved", "## 结论\n通过", Achieved, nil},
		{"3. ASCII words case-insensitively", "PASSED", Achieved, nil},
		{"3. not yet beats a pass mentioned later", "还没达成,虽然构建通过", NotYet, nil},
		{"3. conclusion text only, not the reason", "## 结论\n未达成\n## 理由\n虽然测试通过了", NotYet, nil},
		{"4. isolated 1", "## 结论\n1\n## 理由\nr", Achieved, nil},
		{"4. isolated 0", "score: 0 of 3", NotYet, nil},
		{"4. 1 inside a number is not 1", "v12", NotYet, nil},
		{"5. anything else is not yet", "看起来还行吧", NotYet, nil},
		{"5. heading without conclusion is not yet", "## 理由\n通过", NotYet, nil},
		{"5. an empty reply says nothing", " \n", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := ParseVerdict(tt.in)
			if v.State != tt.state {
				t.Errorf("ParseVerdict(%q).State = %q, want %q", tt.in, v.State, tt.state)
			}
			if v.OK() != (tt.state != "") || v.Achieved() != (tt.state == Achieved) {
				t.Errorf("OK = %v, Achieved = %v", v.OK(), v.Achieved())
			}
			if !reflect.DeepEqual(v.Failed, tt.failed) {
				t.Errorf("Failed = %v, want %v", v.Failed, tt.failed)
			}
		})
	}
}

func TestVerdictRoundTripAndFeedback(t *testing.T) {
	for _, v := range []Verdict{
		{State: Achieved, Reason: "都过了"},
		{State: NotYet, Reason: "缺测试", Failed: []string{"有测试", "能构建"}},
		{State: Unreachable, Reason: "要 macOS"},
	} {
		back := ParseVerdict(v.ToMarkdown())
		if back.State != v.State || back.Reason != v.Reason || !reflect.DeepEqual(back.Failed, v.Failed) {
			t.Errorf("round trip %+v → %+v", v, back)
		}
		path := filepath.Join(t.TempDir(), "v.md")
		if err := v.Write(path); err != nil {
			t.Fatal(err)
		}
		if l, err := LoadVerdict(path); err != nil || l.State != v.State {
			t.Errorf("LoadVerdict = %+v, %v", l, err)
		}
	}
	fb := Verdict{State: NotYet, Reason: "缺测试", Failed: []string{"有测试"}}.Feedback()
	for _, s := range []string{"缺测试", "- 有测试"} {
		if !strings.Contains(fb, s) {
			t.Errorf("Feedback lacks %q:\n%s", s, fb)
		}
	}
	if m := (Verdict{State: NotYet}).Missing(); !reflect.DeepEqual(m, []string{"理由"}) {
		t.Errorf("not_yet without reason Missing = %v", m)
	}
	if !(Verdict{State: Achieved}).Complete() || (Verdict{}).Complete() {
		t.Error("Complete: achieved needs no reason; empty verdict is incomplete")
	}
}
