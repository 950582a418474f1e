package flow

import (
	"strings"

	"github.com/flowerhq/flower/internal/lazyre"
	"github.com/flowerhq/flower/mdsections"
)

// Verdict section names, byte-exact.
const (
	VerdictConclusion = "结论"
	VerdictReason     = "理由"
	VerdictFailed     = "未通过"
)

// Verdict states.
const (
	Achieved    = "achieved"
	NotYet      = "not_yet"
	Unreachable = "unreachable"
)

var verdictSections = []mdsections.Section{
	{Key: "state", Name: VerdictConclusion, Aliases: []string{"判定", "判断", "Verdict", "Conclusion"}},
	{Key: "reason", Name: VerdictReason, Aliases: []string{"原因", "Reason"}},
	{Key: "failed", Name: VerdictFailed, Aliases: []string{"未通过项", "未通过的检查", "Failed"}},
}

// reportTag is the tag VerifyPrompt wraps the worker's report in; a judge
// that echoes it quotes the worker, never concludes.
const reportTag = "自述"

var (
	// Step 2 is Python's fullmatch(r"1|true") / fullmatch(r"0|false") on the
	// stripped text: exact and case-sensitive.
	trueRe  = lazyre.New(`^(?:1|true)$`)
	falseRe = lazyre.New(`^(?:0|false)$`)
)

// Verdict is one judge round's result: exactly three sections, 结论 / 理由 /
// 未通过. State is "achieved", "not_yet", "unreachable", or "" when nothing
// was recognized.
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
}

// ParseVerdict reads only the judge's own words: fenced blocks (with or
// without an info string), "> " quote lines and an echoed <自述> report are
// quotations and are removed first (mdsections.OwnText), and so is text in
// quotation marks inside the conclusion. Then, in this order:
//  1. the 结论 (or 判定) heading sections — every one of them, so a second,
//     contradicting conclusion counts;
//  2. no heading sections at all: the whole stripped text fullmatching
//     1|true → achieved, 0|false → not_yet;
//  3. status words in the conclusion (the whole text when there are no
//     headings): an unverifiable/unreachable word anywhere → unreachable;
//     else a positive word (达成, 通过, achieved, pass, …; ASCII as whole
//     words) → achieved only when the conclusion opens with an allowlisted
//     positive form ("已达成", "目标已达成", "全部通过", "Achieved", "All checks
//     passed") and holds no marker of negation, partiality, hedging,
//     contrast, condition, hearsay or doubt (没/未/不/非/无/部分/基本/但/除/?/
//     not/n't/no/mostly/but/except/fail/…, "2/3"), not_yet otherwise; else
//     a plain "not yet" word (尚未, failed) → not_yet;
//  4. otherwise an isolated 0 → not_yet, an isolated 1 → achieved only as
//     the whole opening clause with no marker (not_yet otherwise);
//  5. otherwise State "" (OK false), which callers treat as not achieved.
//
// Last, a non-empty 未通过 list (anything but 无/没有/空/none/-) turns an
// achieved conclusion into not_yet: a verdict that lists a failing check
// contradicts itself, and the list is fed back.
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
		whole := strings.TrimSpace(own)
		switch {
		case trueRe().MatchString(whole):
			v.State = Achieved
			return v
		case falseRe().MatchString(whole):
			v.State = NotYet
			return v
		}
		concl = whole
		if v.Reason == "" {
			v.Reason = whole
		}
	}
	v.State = conclusionState(concl)
	if v.State == Achieved && len(v.Failed) > 0 {
		v.State = NotYet
	}
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
		out = append(out, VerdictConclusion)
	}
	if !v.Achieved() && mdsections.CleanBody(v.Reason) == "" {
		out = append(out, VerdictReason)
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
	sb.WriteString("## " + VerdictConclusion + "\n\n" + stateWord(v.State) + "\n\n## " + VerdictReason + "\n\n" + mdsections.OrPlaceholder(v.Reason) + "\n\n## " + VerdictFailed + "\n\n")
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
