package flow

import (
	"strings"

	"github.com/flowerhq/flower/internal/mdsections"
)

// Verdict section names, byte-exact.
const (
	verdictConclusion = "结论"
	verdictReason     = "理由"
	verdictFailed     = "未通过"
)

// Verdict states.
const (
	Achieved    = "achieved"
	NotYet      = "not_yet"
	Unreachable = "unreachable"
)

var verdictSections = []mdsections.Section{
	{Key: "state", Name: verdictConclusion, Aliases: []string{"判定", "判断", "Verdict", "Conclusion"}},
	{Key: "reason", Name: verdictReason, Aliases: []string{"原因", "Reason"}},
	{Key: "failed", Name: verdictFailed, Aliases: []string{"未通过项", "未通过的检查", "不通过", "失败", "失败项", "失败的检查",
		"Failed", "Failed checks", "Failing", "Failing checks", "Failures"}},
}

// reportTag is the tag VerifyPrompt wraps the worker's report in; a judge
// that echoes it quotes the worker, never concludes.
const reportTag = "自述"

// Verdict is one judge round's result: its state, the reason and failed
// items fed back, and for a typed verdict its checks, the typed value and
// the judge's Markdown. State is "achieved", "not_yet", "unreachable", or ""
// when there was nothing to read.
type Verdict struct {
	State  string
	Reason string
	Failed []string
	// Checks are the typed verdict's checks (nil for a free-text one).
	Checks []VerdictCheck
	// Typed is the judge's typed verdict as given (nil: none, or free text).
	Typed *TypedVerdict
	// Document is the judge's own Markdown (结论 / 理由 / 未通过), kept for
	// people; it decides nothing.
	Document string
	// JudgeFailed is set when the round had no typed verdict because its
	// judge step failed (disk full, API unreachable, a crash): it is that
	// step's error (its first line). State is then not_yet, so that the
	// worker of a next round is told, but it is no outcome: a queued flow
	// whose last round says this is retried, never completed.
	JudgeFailed string
}

// ParseVerdict reads a free-text verdict (Verdict.parse in the original), for
// library users whose judge gives no typed verdict; flower's own judges do
// (Judged). It is conservative — never a yes for a no:
//   - the conclusion is the 结论 (or 判定) section, read from the judge's own
//     words (fenced blocks, "> " quotes and an echoed <自述> report are
//     quotations), or the whole text when it has no headings;
//   - an unverifiable/unreachable word in it → unreachable, as before;
//   - achieved only when there is exactly one conclusion, and it is, with
//     Markdown, a list marker and closing punctuation removed, exactly one
//     positive form (已达成, 达成, 目标已达成, 已通过, 通过, 全部通过,
//     achieved, pass, passed, yes, true, 1) and nothing else; and every
//     failing section (未通过, 不通过, 失败, 失败项, Failed, Failing checks,
//     …) holds only an explicit none (无, 没有, none, -); and nowhere in
//     the reply — quotations included — stands a ❌, an unchecked box,
//     `false`, a second conclusion, or a marker of negation, partiality,
//     hedging, contrast, condition, hearsay or doubt (没/未/不/非/部分/但/
//     除/如果/?/not/n't/but/except/fail/…, a count like 2/3 or "4 项，共 5 项");
//   - everything else is not_yet ("" only for an empty reply).
//
// A positive with an explanation ("已达成，没有问题。") may come out
// not_yet: the typed verdict carries those. docs/seed-map.md says why the
// reader no longer recognizes words in an order.
func ParseVerdict(text string) Verdict {
	own := mdsections.OwnText(text, reportTag)
	s, found := mdsections.ParseAll(own, verdictSections)
	v := Verdict{}
	if r := s["reason"]; len(r) > 0 {
		v.Reason = r[0]
	}
	for _, f := range s["failed"] {
		v.Failed = append(v.Failed, mdsections.ListItems(f)...)
	}
	concl := strings.Join(s["state"], "\n")
	if !found {
		concl = strings.TrimSpace(own)
		if v.Reason == "" {
			v.Reason = concl
		}
	}
	switch {
	case strings.TrimSpace(text) == "":
		return v
	case containsAny(strings.ToLower(concl), unreachableWords):
		v.State = Unreachable
		return v
	}
	v.State = NotYet
	if found && len(s["state"]) != 1 || !exactlyPositive(concl) || negative(text) {
		return v
	}
	for _, f := range s["failed"] {
		if !explicitNone(f) {
			return v
		}
	}
	v.Failed = nil // an explicit none is no failed item
	v.State = Achieved
	return v
}

// LoadVerdict reads and parses the verdict at path.
func LoadVerdict(path string) (Verdict, error) {
	text, err := mdsections.Read(path)
	if err != nil {
		return Verdict{}, err
	}
	return ParseVerdict(text), nil
}

// OK reports whether a state was recognized.
func (v Verdict) OK() bool { return v.State != "" }

// Achieved reports whether the judge said the goal is reached.
func (v Verdict) Achieved() bool { return v.State == Achieved }

// Missing returns the names of the empty required sections: 结论 always,
// 理由 unless the goal is achieved (a "not yet" without a reason gives the
// worker nothing to act on).
func (v Verdict) Missing() []string {
	var out []string
	if !v.OK() {
		out = append(out, verdictConclusion)
	}
	if !v.Achieved() && mdsections.CleanBody(v.Reason) == "" {
		out = append(out, verdictReason)
	}
	return out
}

// Complete reports whether nothing required is missing.
func (v Verdict) Complete() bool { return len(v.Missing()) == 0 }

// stateWord is the Chinese word ToMarkdown writes for each state.
func stateWord(s string) string {
	switch s {
	case Achieved:
		return "已达成"
	case NotYet:
		return "未达成"
	case Unreachable:
		return "无法达成"
	}
	return mdsections.Placeholder
}

// ToMarkdown renders the verdict; parsing it back gives the same verdict.
func (v Verdict) ToMarkdown() string {
	var sb strings.Builder
	sb.WriteString("## " + verdictConclusion + "\n\n" + stateWord(v.State) + "\n\n## " + verdictReason + "\n\n" + mdsections.OrPlaceholder(v.Reason) + "\n\n## " + verdictFailed + "\n\n")
	if len(v.Failed) == 0 {
		sb.WriteString("无\n")
	}
	for _, f := range v.Failed {
		sb.WriteString("- " + f + "\n")
	}
	return sb.String()
}

// PromptBlock renders the verdict for a model.
func (v Verdict) PromptBlock() string {
	return "<评审>\n" + strings.TrimSpace(v.ToMarkdown()) + "\n</评审>"
}

// Feedback is what a rejected round resumes with: the judge's reason and
// the failed checks, in the same session that did the work.
func (v Verdict) Feedback() string {
	var sb strings.Builder
	sb.WriteString("独立评审认为目标还没有达成(" + stateWord(v.State) + ")。\n")
	if r := strings.TrimSpace(v.Reason); r != "" {
		sb.WriteString("理由: " + r + "\n")
	}
	if len(v.Failed) > 0 {
		sb.WriteString("未通过的检查:\n")
		for _, f := range v.Failed {
			sb.WriteString("- " + f + "\n")
		}
	}
	for _, c := range v.Checks {
		if !c.Passed {
			sb.WriteString("检查「" + c.Check + "」没有通过;评审的依据: " + mdsections.OrPlaceholder(strings.TrimSpace(c.Evidence)) + "\n")
		}
	}
	sb.WriteString("针对这些问题继续工作,改完逐条自己验证,再结束这一轮。")
	return sb.String()
}

// Write writes the verdict to path.
func (v Verdict) Write(path string) error { return mdsections.Write(path, v.ToMarkdown()) }
