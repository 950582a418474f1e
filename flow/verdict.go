package flow

import "slices"
import "sort"
import "strings"
import "unicode/utf8"

import "github.com/flowerhq/flower/internal/docs"
import "github.com/flowerhq/flower/internal/lazyre"

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

var verdictSections = []docs.Section{
	{Key: "state", Name: VerdictConclusion, Aliases: []string{"判定", "判断", "Verdict", "Conclusion"}},
	{Key: "reason", Name: VerdictReason, Aliases: []string{"原因", "Reason"}},
	{Key: "failed", Name: VerdictFailed, Aliases: []string{"未通过项", "未通过的检查", "Failed"}},
}

// statusWords are the judge's words for each state, in declaration order.
// ParseVerdict tries them longest first (in characters, as the seed's
// Python measures them), each anywhere in the conclusion; the first word of
// that order that occurs decides — not the leftmost hit in the text. So a
// hedged pass, "通过,但 macOS 上无法验证" or "passed, but cannot be verified
// on macOS here", is unreachable: "无法验证" and "cannot be verified" are
// longer than "通过" and "passed". Every way of saying "cannot be verified
// here" is unreachable: a judge that cannot check must stop and ask, not pass
// on reading the source. Among words of equal length the earlier
// declaration wins, so the cautious states come first.
var statusWords = []struct{ word, state string }{
	{"不可达成", Unreachable}, {"无法达成", Unreachable}, {"达成不了", Unreachable}, {"达不到", Unreachable}, {"不可能", Unreachable},
	{"暂时无法验证", Unreachable}, {"还没法验证", Unreachable},
	{"无法验证", Unreachable}, {"没法验证", Unreachable}, {"验证不了", Unreachable}, {"无法判定", Unreachable},
	{"不能验证", Unreachable}, {"无从验证", Unreachable},
	{"unverifiable", Unreachable}, {"unreachable", Unreachable}, {"impossible", Unreachable},
	{"cannot be verified", Unreachable}, {"can't be verified", Unreachable}, {"could not be verified", Unreachable},
	{"couldn't be verified", Unreachable}, {"not verifiable", Unreachable}, {"unable to verify", Unreachable},
	{"cannot verify", Unreachable}, {"can't verify", Unreachable},

	{"尚未达成", NotYet}, {"还没达成", NotYet}, {"未达成", NotYet}, {"没达成", NotYet}, {"未完成", NotYet},
	{"未通过", NotYet}, {"不通过", NotYet}, {"没通过", NotYet}, {"通过不了", NotYet}, {"未满足", NotYet}, {"不满足", NotYet},
	{"尚未", NotYet}, {"还没", NotYet},
	{"not achieved", NotYet}, {"not yet", NotYet}, {"not_yet", NotYet}, {"not done", NotYet}, {"not passed", NotYet},
	{"failed", NotYet}, {"fail", NotYet},

	{"已达成", Achieved}, {"已完成", Achieved}, {"已满足", Achieved}, {"达成", Achieved}, {"通过", Achieved},
	{"achieved", Achieved}, {"passed", Achieved}, {"pass", Achieved}, {"done", Achieved},
}

// statusOrder is statusWords longest first (stable: ties keep declaration order).
var statusOrder = func() []struct{ word, state string } {
	out := slices.Clone(statusWords)
	sort.SliceStable(out, func(i, j int) bool {
		return utf8.RuneCountInString(out[i].word) > utf8.RuneCountInString(out[j].word)
	})
	return out
}()

var (
	// Step 2 is Python's fullmatch(r"1|true") / fullmatch(r"0|false") on the
	// stripped text: exact and case-sensitive.
	trueRe  = lazyre.New(`^(?:1|true)$`)
	falseRe = lazyre.New(`^(?:0|false)$`)
	oneRe   = lazyre.New(`\b1\b`)
	zeroRe  = lazyre.New(`\b0\b`)
)

// statusOf is step 3: the first word of statusOrder found anywhere in
// text (ASCII words case-insensitively), or "".
func statusOf(text string) string {
	lower := strings.ToLower(text)
	for _, w := range statusOrder {
		if strings.Contains(lower, w.word) {
			return w.state
		}
	}
	return ""
}

// Verdict is one judge round's result: exactly three sections, 结论 / 理由 /
// 未通过. State is "achieved", "not_yet", "unreachable", or "" when nothing
// was recognized.
type Verdict struct {
	State  string
	Reason string
	Failed []string
}

// ParseVerdict recognizes the state in this order:
//  1. the 结论 (or 判定) heading section;
//  2. no heading sections at all: the whole stripped text fullmatching
//     1|true → achieved, 0|false → not_yet;
//  3. otherwise the status words longest first, each searched anywhere in
//     the conclusion text (the whole text when there are no headings): the
//     first word of that order that occurs decides;
//  4. otherwise an isolated \b1\b → achieved, \b0\b → not_yet;
//  5. otherwise State "" (OK false), which callers treat as not achieved.
func ParseVerdict(text string) Verdict {
	s, found := docs.Parse(text, verdictSections)
	v := Verdict{Reason: s["reason"], Failed: docs.ListItems(s["failed"])}
	concl := s["state"]
	if !found {
		whole := strings.TrimSpace(text)
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
	if st := statusOf(concl); st != "" {
		v.State = st
		return v
	}
	switch {
	case oneRe().MatchString(concl):
		v.State = Achieved
	case zeroRe().MatchString(concl):
		v.State = NotYet
	}
	return v
}

// LoadVerdict reads and parses the verdict at path.
func LoadVerdict(path string) (Verdict, error) {
	text, err := docs.Read(path)
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
	if !v.Achieved() && docs.CleanBody(v.Reason) == "" {
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
	return docs.Placeholder
}

// ToMarkdown renders the verdict; parsing it back gives the same verdict.
func (v Verdict) ToMarkdown() string {
	var sb strings.Builder
	sb.WriteString("## " + VerdictConclusion + "\n\n" + stateWord(v.State) + "\n\n## " + VerdictReason + "\n\n" + docs.OrPlaceholder(v.Reason) + "\n\n## " + VerdictFailed + "\n\n")
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
	sb.WriteString("针对这些问题继续工作,改完逐条自己验证,再结束这一轮。")
	return sb.String()
}

// Write writes the verdict to path.
func (v Verdict) Write(path string) error { return docs.Write(path, v.ToMarkdown()) }
