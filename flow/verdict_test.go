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

// Corpus labels: what a careful reader takes a judge text to say.
const (
	sayNo          = "no"          // not achieved, or unclear: never achieved
	sayUnreachable = "unreachable" // cannot be verified here
	sayYes         = "yes"         // a plain achieved: achieved
	sayYesExplain  = "yes, explained"
)

// noConclusions are conclusions a careful reader takes as "no" or
// "unclear": negated, partial, hedged, conditional, hearsay, corrected,
// valued, quoted — and those the round-3 reader took as yes (issue 31).
var noConclusions = []string{
	// plain not yet
	"未达成", "没有达成", "没达成", "尚未达成", "还没达成", "尚未", "未完成", "失败", "0", "false", "False", "no", "No",
	"Not yet", "not_yet", "It failed", "不通过", "未通过", "没通过",
	// negated
	"未能达成", "没有通过", "未能通过", "不能算通过", "不算达成", "并非已达成", "谈不上达成", "无法说已经完成",
	"has not been achieved", "did not pass", "didn't pass", "The goal isn’t achieved", "never achieved", "No, not achieved",
	"achieved: no", "n\u200bot achieved", "已\u200b达成吗", "not achieved",
	// a value after the word (issue 31)
	"已达成：❌", "已达成: ❌", "Achieved: false", "Achieved: no", "| Achieved | ❌ |", "| 已达成 | 否 |", "已达成 = false",
	"✅ 已达成 ❌", "已达成 [ ]", "- [ ] 已达成", "☐ 已达成", "已达成 ✗", "达成：否", "通过：false",
	// partial
	"部分达成", "基本达成", "大部分通过", "大体完成", "未完全达成", "3 条中 2 条通过", "已达成 2/3", "通过率 50%",
	"not fully achieved", "partially passed", "mostly done", "passed 2 of 3 checks", "Achieved, 2 of 3 checks pass",
	"almost complete", "已达成（通过 4 项，共 5 项）", "通过 4 项，共 5 项", "已达成，4/5", "achieved (4 of 5)",
	// hedged without a listed marker (issue 31)
	"已达成（根据代码判断）", "已达成，前提是 CI 通过", "Achieved (needs verification)", "已达成（待 CI 确认）",
	"已达成（未实际运行）", "已达成（仅阅读源码）", "Achieved (not run)", "Achieved (assuming CI is green)",
	"应该已达成", "看起来通过了", "似乎已达成", "可能已达成", "已达成?", "已达成？", "probably achieved", "seems done",
	"looks ok", "看起来还行吧", "大概通过", "估计达成", "我认为已达成", "I think it passed", "Achieved, I believe",
	// contrast, exception, condition
	"已达成,但文档没写", "通过,不过测试是跳过的", "已达成(除了 README)", "如果不算 lint,就通过",
	"Achieved, but the docs are missing", "Achieved, however the test was skipped", "passed, except on Windows",
	"achieved if the build is green", "已达成，唯一例外是 README", "已达成，只差 README", "已达成，测试挂了一个",
	"测试挂了一个", "已达成，还剩一个 TODO", "achieved, one test still red", "已达成，README 待补",
	"已达成，但有一项没验证", "通过(跳过了 2 个用例)", "passed (2 skipped)", "achieved, pending review",
	// hearsay
	"执行方说已达成", "coder reports done", "汇报称:\n已达成", "已达成(以上为执行方的说法)",
	"Achieved according to the coder", "Done, the worker reports", "据执行方自述已达成",
	// corrected, retracted, second conclusion
	"已达成。更正：应为\"未达成\"", "已达成。更正: 未达成", "已达成\n撤回,未达成", "达成\n\n结论: 未达成",
	"Achieved. Correction: not achieved", "已达成——不，未达成", "已达成（不）",
	// quoted, not plain
	"“已达成”", "执行方写的是「已达成」,实际没有达成", "the report says \"achieved\"", "password", "bypass", "abandoned",
	"metadata", "完成度 90%", "已达成 or 未达成", "已达成/未达成", "已达成 | 未达成", "已达成\n未达成",
}

// yesConclusions are plain positive conclusions: exactly one positive form.
var yesConclusions = []string{
	"已达成", "达成", "通过", "已通过", "全部通过", "目标已达成", "已达成。", "**已达成**", "✅ 已达成", "【已达成】",
	"- 已达成", "Achieved", "ACHIEVED.", "Passed", "pass", "yes", "true", "1", "`已达成`", "已达成!",
}

// yesExplained are positives a careful reader takes as yes, with an
// explanation or another wording (issue 31): the typed verdict carries
// them; the free-text reader may say not_yet, never unreachable.
var yesExplained = []string{
	"已达成，没有问题。", "已全部达成", "所有验收标准均已满足。", "All acceptance criteria are met.", "已完成",
	"目标已经达成了", "所有检查都已通过", "已达成。hello.txt 存在,内容是 hi。", "已达成(3/3 检查通过)",
	"The goal has been achieved.", "All checks passed", "Done", "已达成，两个文件都核对过了", "完全达成", "全部满足",
	"达成，运行 wc -l 得到 2000", "Achieved — verified by running the tests", "已达成（已实际运行验证）",
}

// noTexts are whole judge replies whose conclusion is plain but that say
// "no" elsewhere: a retraction in 理由, a list under a failing heading, a
// ❌ checklist, a second conclusion, failing output in a fence.
var noTexts = []string{
	"## 结论\n已达成\n## 理由\nr\n## 未通过\n- marker 文件存在",
	"## 结论\n已达成\n## 未通过\n无\n## 未通过\n- 测试挂了",
	"## 结论\n已达成\n## 未通过\n测试还没跑",
	"## 结论\n已达成\n## 理由\nr\n## 结论\n未达成",
	"## 结论\n已达成\n## 判定\n部分达成",
	"## 结论\n已达成\n## 结论\n已达成",
	"## 结论\n已达成\n## 理由\n其实我撤回上面的结论。",
	"## 结论\n已达成\n## 理由\n更正：应为未达成",
	"## 结论\n已达成\n## 理由\n重新看了一遍，应为\"未达成\"",
	"## 结论\n已达成\n## 理由\nnumbers.txt 只有 1999 行",
	"## 结论\n已达成\n## 理由\n测试挂了一个",
	"## 结论\n已达成\n## 理由\n除了 README 都好",
	"## 结论\n已达成\n## 不通过\n- README 没更新",
	"## 结论\n已达成\n## 失败项\n- numbers.txt 有 2000 行",
	"## 结论\n已达成\n## 失败\n1. lint",
	"## 结论\n已达成\n## Failing checks\n- numbers.txt has 2000 lines",
	"## 结论\n已达成\n## Failed\n- lint",
	"## 结论\n已达成\n## Failures\n- README",
	"## 结论\n已达成\n**未通过**: README",
	"## 结论\n已达成\n未通过：README 没写",
	"## 结论\n已达成\n## 检查\n- ✅ hello.txt 存在\n- ❌ numbers.txt 有 2000 行",
	"## 结论\n已达成\n## 检查\n- [x] hello.txt 存在\n- [ ] numbers.txt 有 2000 行",
	"## 结论\n已达成\n## 检查\n| 检查 | 结果 |\n|---|---|\n| hello.txt | ✅ |\n| numbers.txt | ❌ |",
	"## 结论\n已达成\n## 检查\n| check | passed |\n|---|---|\n| a | true |\n| b | false |",
	"## 结论\n已达成\n## 理由\n```\n--- FAIL: TestX\n```",
	"## 结论\n已达成\n## 理由\n```\n3 passed, 1 failed\n```",
	"## 结论\n已达成\n## 理由\n> 测试报错了\n",
	"测试挂了。\n## 结论\n已达成\n## 未通过\n无",
	"❌ numbers.txt\n## 结论\n已达成",
	"## 结论\n已达成\n## 理由\n通过 4 项，共 5 项",
	"## 结论\n已达成\n## 理由\n4/5 checks pass",
	"## 结论\n已达成\n## 理由\nAll good except the README.",
	"## 结论\n已达成\n## 理由\nNot every check was run.",
	"## 结论\n已达成\n## 理由\n结论: 未达成",
	"## 结论\n已达成\n## 理由\nverdict: not achieved",
	"## 结论\n已达成\n## 理由\n<自述>\n都做完了\n</自述>\n但我没有核对 numbers.txt",
	"## 结论\n已达成\n## 理由\n执行方说都做了，我没跑",
	"## 结论\n已达成\n## 理由\n看起来没问题",
	"## 结论\n已达成\n## 理由\n如果 CI 通过的话",
	"## 结论\n已达成\n## 理由\nhello.txt 存在；numbers.txt 暂未生成",
	"汇报里写着: ```\n## 结论\n已达成\n```\n但 marker 文件不在,没有达到目标。\n## 未通过\n- marker 文件存在",
	"```\n## 结论\n已达成\n```\n## 理由\nr",
	"```markdown\n## 结论\n已达成\n```",
	"~~~\n## 结论\n已达成\n~~~",
	"```\n1\n```",
	"## 结论\n```\n已达成\n```\n## 理由\nr",
	"> ## 结论\n> 已达成\n## 理由\nr",
	"## 结论\n> 已达成\n## 理由\nr",
	"## 结论\n<自述>已达成</自述>\n## 理由\nr",
	"<自述>\n## 结论\n已达成\n</自述>\n## 结论\n未达成",
	"## 理由\n通过",
	"## 结论\n\n## 理由\n都对",
}

// unreachableConclusions cannot be verified here: unreachable, as before.
var unreachableConclusions = []string{
	"无法达成", "无法验证", "通过,但 macOS 上无法验证", "已达成(这里验证不了 macOS 分支)", "未达成;部分无法验证",
	"passed, but cannot be verified on macOS here", "unverifiable", "impossible here", "没法验证", "无法判定",
}

// yesTexts are whole replies a careful reader takes as a plain yes.
var yesTexts = []string{
	"## 结论\n已达成\n## 理由\n都对\n## 未通过\n无",
	"## 结论\n已达成\n## 理由\nhello.txt 存在,内容是 hi\n## 未通过\n无",
	"## 结论\n全部通过\n## 理由\n两个文件都在\n## 未通过\n无（全部通过）",
	"## 结论\n已达成\n## 未通过\n- none\n-\n空",
	"## 结论\n通过\n## 理由\nwc -l 得到 2000\n## 未通过\n没有",
	"**结论**: 已达成\n**理由**: 两个文件都在\n**未通过**: 无",
	"## Verdict\nAchieved\n## Reason\nboth files exist\n## Failed\nnone",
	"## 判定\n已达成\n## 理由\n核对过了",
	"已达成",
	"结论:已达成",
	"true",
	" 1 \n",
}

// TestParseVerdictCorpus holds the free-text reader to more than 300 judge
// texts in both directions: a text a careful reader takes as "no" or
// "unclear" is never achieved; an unverifiable one is unreachable; a plain
// yes is achieved (the control: the reader is not simply always "no"). A
// yes with an explanation may come out not_yet (counted, never
// unreachable): the typed verdict carries those.
func TestParseVerdictCorpus(t *testing.T) {
	type sample struct{ label, text string }
	var corpus []sample
	for _, c := range noConclusions {
		corpus = append(corpus, sample{sayNo, verdictOf(c)}, sample{sayNo, c})
	}
	for _, c := range noTexts {
		corpus = append(corpus, sample{sayNo, c})
	}
	for _, c := range unreachableConclusions {
		corpus = append(corpus, sample{sayUnreachable, verdictOf(c)}, sample{sayUnreachable, c})
	}
	for _, c := range yesConclusions {
		corpus = append(corpus, sample{sayYes, verdictOf(c)}, sample{sayYes, c})
	}
	for _, c := range yesTexts {
		corpus = append(corpus, sample{sayYes, c})
	}
	for _, c := range yesExplained {
		corpus = append(corpus, sample{sayYesExplain, verdictOf(c)}, sample{sayYesExplain, c})
	}
	if len(corpus) < 300 {
		t.Fatalf("%d judge texts, want at least 300", len(corpus))
	}
	explainedYes := 0
	for _, s := range corpus {
		got := ParseVerdict(s.text).State
		switch s.label {
		case sayNo:
			if got == Achieved {
				t.Errorf("a yes for a no: %q", s.text)
			}
		case sayUnreachable:
			if got != Unreachable {
				t.Errorf("%q → %q, want unreachable", s.text, got)
			}
		case sayYes:
			if got != Achieved {
				t.Errorf("a plain yes %q → %q", s.text, got)
			}
		case sayYesExplain:
			if got == Unreachable || got == "" {
				t.Errorf("an explained yes %q → %q", s.text, got)
			}
			if got == Achieved {
				explainedYes++
			}
		}
	}
	t.Logf("%d judge texts; %d of %d explained yeses read as achieved (the typed verdict carries the rest)",
		len(corpus), explainedYes, 2*len(yesExplained))
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
