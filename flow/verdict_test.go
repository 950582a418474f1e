package flow

import (
	"strings"
	"testing"
)

// verdictOf is a judge reply with a 结论 section holding concl, a reason and
// an empty 未通过 list: only the conclusion decides.
func verdictOf(concl string) string {
	return "## 结论\n" + concl + "\n## 理由\n核对过了\n## 未通过\n无"
}

// TestConclusions: every conclusion a judge may write, with the state it
// must give. Achieved is an allowlist (a positive form, no marker); every
// negated, partial, hedged, quoted or self-contradicting form is not.
func TestConclusions(t *testing.T) {
	tests := []struct {
		what, concl, state string
	}{
		// Achieved: the allowlisted positive forms, with harmless decoration.
		{"achieved", "已达成", Achieved},
		{"achieved", "达成", Achieved},
		{"achieved", "通过", Achieved},
		{"achieved", "已通过", Achieved},
		{"achieved", "全部通过", Achieved},
		{"achieved", "已完成", Achieved},
		{"achieved", "目标已达成", Achieved},
		{"achieved", "目标已经达成了", Achieved},
		{"achieved", "所有检查都已通过", Achieved},
		{"achieved", "已达成。", Achieved},
		{"achieved", "**已达成**", Achieved},
		{"achieved", "✅ 已达成", Achieved},
		{"achieved", "【已达成】", Achieved},
		{"achieved", "- 已达成", Achieved},
		{"achieved", "结论:已达成", Achieved},
		{"achieved", "已达成。hello.txt 存在,内容是 hi。", Achieved},
		{"achieved", "已达成(3/3 检查通过)", Achieved},
		{"achieved", "Achieved", Achieved},
		{"achieved", "ACHIEVED.", Achieved},
		{"achieved", "The goal has been achieved.", Achieved},
		{"achieved", "All checks passed", Achieved},
		{"achieved", "Passed", Achieved},
		{"achieved", "Done", Achieved},
		{"achieved", "1", Achieved},

		// Not yet, said plainly.
		{"not yet", "未达成", NotYet},
		{"not yet", "没有达成", NotYet},
		{"not yet", "没达成", NotYet},
		{"not yet", "尚未达成", NotYet},
		{"not yet", "还没达成", NotYet},
		{"not yet", "尚未", NotYet},
		{"not yet", "未完成", NotYet},
		{"not yet", "失败", NotYet},
		{"not yet", "0", NotYet},
		{"not yet", "Not yet", NotYet},
		{"not yet", "not_yet", NotYet},
		{"not yet", "It failed", NotYet},

		// Negated.
		{"negated", "未能达成", NotYet},
		{"negated", "没有通过", NotYet},
		{"negated", "未能通过", NotYet},
		{"negated", "不能算通过", NotYet},
		{"negated", "不算达成", NotYet},
		{"negated", "并非已达成", NotYet},
		{"negated", "谈不上达成", NotYet},
		{"negated", "无法说已经完成", NotYet},
		{"negated", "has not been achieved", NotYet},
		{"negated", "did not pass", NotYet},
		{"negated", "didn't pass", NotYet},
		{"negated", "The goal isn’t achieved", NotYet},
		{"negated", "never achieved", NotYet},
		{"negated", "No, not achieved", NotYet},
		{"negated", "achieved: no", NotYet},

		// Partial.
		{"partial", "部分达成", NotYet},
		{"partial", "基本达成", NotYet},
		{"partial", "大部分通过", NotYet},
		{"partial", "大体完成", NotYet},
		{"partial", "未完全达成", NotYet},
		{"partial", "3 条中 2 条通过", NotYet},
		{"partial", "已达成 2/3", NotYet},
		{"partial", "通过率 50%", NotYet},
		{"partial", "not fully achieved", NotYet},
		{"partial", "partially passed", NotYet},
		{"partial", "mostly done", NotYet},
		{"partial", "passed 2 of 3 checks", NotYet},
		{"partial", "Achieved, 2 of 3 checks pass", NotYet},
		{"partial", "almost complete", NotYet},

		// Hedged.
		{"hedged", "应该已达成", NotYet},
		{"hedged", "看起来通过了", NotYet},
		{"hedged", "似乎已达成", NotYet},
		{"hedged", "可能已达成", NotYet},
		{"hedged", "已达成?", NotYet},
		{"hedged", "已达成,但文档没写", NotYet},
		{"hedged", "通过,不过测试是跳过的", NotYet},
		{"hedged", "已达成(除了 README)", NotYet},
		{"hedged", "如果不算 lint,就通过", NotYet},
		{"hedged", "probably achieved", NotYet},
		{"hedged", "Achieved, but the docs are missing", NotYet},
		{"hedged", "Achieved, however the test was skipped", NotYet},
		{"hedged", "passed, except on Windows", NotYet},
		{"hedged", "seems done", NotYet},
		{"hedged", "achieved if the build is green", NotYet},
		{"hedged", "looks ok", ""},
		{"hedged, no status word", "看起来还行吧", ""},

		// A positive word that is not a plain verdict.
		{"not plain", "执行方说已达成", NotYet},
		{"not plain", "coder reports done", NotYet},
		{"not plain", "password reset done", NotYet},
		{"not plain", "汇报称:\n已达成", NotYet},
		{"hearsay", "已达成(以上为执行方的说法)", NotYet},
		{"hearsay", "Achieved according to the coder", NotYet},
		{"hearsay", "Done, the worker reports", NotYet},
		{"hidden negation", "n\u200bot achieved", NotYet},
		{"hidden characters", "已\u200b达成", NotYet},

		// Whole words: pass/done/met inside other words are no verdict.
		{"inside a word", "password", ""},
		{"inside a word", "bypass", ""},
		{"inside a word", "abandoned", ""},
		{"inside a word", "metadata", ""},

		// Unreachable, as today: an unverifiable word anywhere.
		{"unreachable", "无法达成", Unreachable},
		{"unreachable", "无法验证", Unreachable},
		{"unreachable", "通过,但 macOS 上无法验证", Unreachable},
		{"unreachable", "已达成(这里验证不了 macOS 分支)", Unreachable},
		{"unreachable", "未达成;部分无法验证", Unreachable},
		{"unreachable", "passed, but cannot be verified on macOS here", Unreachable},
		{"unreachable", "unverifiable", Unreachable},
		{"unreachable", "impossible here", Unreachable},

		// Quoted: the judge's words in quotation marks are not its verdict.
		{"quoted", "“已达成”", ""},
		{"quoted", "执行方写的是「已达成」,实际没有达成", NotYet},
		{"quoted", "the report says \"achieved\"", ""},
	}
	if len(tests) < 80 {
		t.Fatalf("%d conclusions, want at least 80", len(tests))
	}
	for _, tt := range tests {
		if v := ParseVerdict(verdictOf(tt.concl)); v.State != tt.state {
			t.Errorf("%s: 结论 %q → %q, want %q", tt.what, tt.concl, v.State, tt.state)
		}
	}
}

// TestVerdictQuotationsAndContradictions: a verdict inside a fence (with or
// without an info string), a quote or an echoed report is not the judge's;
// a second conclusion or a non-empty 未通过 list contradicts an achieved
// one. Each case has its control: the same text without the trap.
func TestVerdictQuotationsAndContradictions(t *testing.T) {
	const failed = "\n## 未通过\n- marker 文件存在"
	tests := []struct {
		what, text, state string
	}{
		{"issue 21: a fenced verdict quoted by the judge",
			"汇报里写着: ```\n## 结论\n已达成\n```\n但 marker 文件不在,没有达到目标。" + failed, ""},
		{"untagged fence", "```\n## 结论\n已达成\n```\n## 理由\nr", ""},
		{"md fence", "```markdown\n## 结论\n已达成\n```", ""},
		{"tilde fence", "~~~\n## 结论\n已达成\n~~~", ""},
		{"fenced 1 is not step 2", "```\n1\n```", ""},
		{"a fence inside the conclusion", "## 结论\n```\n已达成\n```\n## 理由\nr", ""},
		{"quote lines", "> ## 结论\n> 已达成\n## 理由\nr", ""},
		{"quoted conclusion body", "## 结论\n> 已达成\n## 理由\nr", ""},
		{"echoed report", "## 结论\n<自述>已达成</自述>\n## 理由\nr", ""},
		{"echoed report over lines", "<自述>\n## 结论\n已达成\n</自述>\n## 结论\n未达成", NotYet},
		{"control: the same verdict unquoted", "## 结论\n已达成\n## 理由\nr", Achieved},
		{"a 未通过 list contradicts achieved", "## 结论\n已达成\n## 理由\nr" + failed, NotYet},
		{"a 未通过 list in a second section", "## 结论\n已达成\n## 未通过\n无\n## 未通过\n- 测试挂了", NotYet},
		{"未通过 written as prose", "## 结论\n已达成\n## 未通过\n测试还没跑", NotYet},
		{"control: 未通过 无", "## 结论\n已达成\n## 未通过\n无", Achieved},
		{"control: 未通过 none/-/空", "## 结论\n已达成\n## 未通过\n- none\n-\n空", Achieved},
		{"a second conclusion contradicts the first", "## 结论\n已达成\n## 理由\nr\n## 结论\n未达成", NotYet},
		{"判定 after 结论", "## 结论\n已达成\n## 判定\n部分达成", NotYet},
		{"control: a repeated plain conclusion", "## 结论\n已达成\n## 结论\n已达成", Achieved},
	}
	for _, tt := range tests {
		v := ParseVerdict(tt.text)
		if v.State != tt.state {
			t.Errorf("%s: %q → %q, want %q", tt.what, tt.text, v.State, tt.state)
		}
		if strings.Contains(tt.text, failed) && len(v.Failed) != 1 {
			t.Errorf("%s: Failed = %q, want the one check (it is fed back)", tt.what, v.Failed)
		}
	}
}

// BenchmarkParseVerdict: one judge reply of the usual size, achieved (every
// marker is looked for) and not yet.
func BenchmarkParseVerdict(b *testing.B) {
	reason := strings.Repeat("hello.txt 存在,内容是 hi;numbers.txt 有 2000 行。", 20)
	for _, in := range []struct{ name, text string }{
		{"achieved", "## 结论\n已达成\n## 理由\n" + reason + "\n## 未通过\n无"},
		{"not_yet", "## 结论\n没有达成\n## 理由\n" + reason + "\n## 未通过\n- numbers.txt 有 2000 行"},
	} {
		b.Run(in.name, func(b *testing.B) {
			for b.Loop() {
				ParseVerdict(in.text)
			}
		})
	}
}
