package flow

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/flowerhq/flower/internal/lazyre"
)

// How a judge's conclusion is read (see ParseVerdict and the package doc).
// Achieved is an allowlist: the conclusion must open with one of the
// positive forms below and hold nothing from the broad marker set — no
// negation, no hedge, no partial count, no question, nothing quoted. A new
// way of saying "not" cannot slip through, because it is not a positive
// form and almost always carries a marker; the worst a new positive
// phrasing can do is cost a round.

// unreachableWords are the judge's words for "cannot be reached or verified
// here"; any of them anywhere in the conclusion makes it unreachable (a
// judge that cannot check must stop and ask, never pass on reading the
// source). Chinese words are substrings; ASCII ones whole words.
var unreachableWords = []string{
	"不可达成", "无法达成", "达成不了", "达不到", "不可能",
	"无法验证", "没法验证", "验证不了", "无法判定", "不能验证", "无从验证", "无法核实", "无法确认",
	"unverifiable", "unreachable", "impossible", "cannot be verified", "can't be verified", "could not be verified",
	"couldn't be verified", "not verifiable", "unable to verify", "cannot verify", "can't verify",
}

// positiveWords say "done" in a conclusion. One of them makes the
// conclusion a statement about the goal: it is achieved only in an
// allowlisted form (positiveRe, positiveASCII) without any marker, and
// not_yet otherwise (hedged, partial, negated, or not said plainly).
var positiveWords = []string{
	"达成", "完成", "满足", "通过", "达标",
	"achieved", "passed", "pass", "done", "met", "complete", "completed", "accomplished", "succeeded", "satisfied",
}

// negativeWords are the plain "not yet" words that hold no positive word
// ("尚未", "failed"); each carries a marker too, so they only decide
// between not_yet and "" (nothing recognized).
var negativeWords = []string{
	"尚未", "还没", "没有", "失败", "驳回", "不行", "不合格",
	"not yet", "not_yet", "fail", "fails", "failed", "failing", "failure", "rejected", "incomplete",
}

// markerSubstrings are the Chinese negation, partial, hedge, contrast,
// condition and hearsay markers (and question marks): any of them in the
// conclusion makes "achieved" impossible. Single characters on purpose —
// 没/未/不/非/无 catch every compound built on them.
var markerSubstrings = []string{
	"没", "未", "不", "非", "无", "否", "别", "勿", "莫", "缺", "欠", "漏", "差", "错", "误", "败", "失", "假", "伪", "拒", "驳",
	"部分", "基本", "大部", "大多", "多数", "少数", "大体", "大致", "大概", "大约", "几乎", "接近", "一半", "初步", "勉强",
	"似", "像", "看起来", "看上去", "貌似", "应该", "应当", "理应", "可能", "也许", "或", "估计", "恐怕", "猜", "疑",
	"但", "然而", "可是", "却", "除", "以外", "之外", "只", "仅", "尚", "还", "仍", "暂", "待", "需要", "仍需", "还需",
	"如果", "假如", "若", "要是", "虽", "尽管", "即使", "其中", "问题", "风险", "异常", "跳过", "忽略", "绕过",
	"汇报", "自述", "执行方", "以上", "声称", "自称", "据称", "据说", "号称", "说", "称",
	"?", "？", "…", "%", "％",
}

// markerWords are the English markers, matched as whole words
// (lowercased); markerPrefixes catch their families (un-, non-, mis-, …).
var markerWords = map[string]bool{}

var markerPrefixes = []string{"un", "non", "mis", "fail", "incomplet", "insufficien", "inconclusiv", "partial", "except", "pretend", "suppos", "alleg"}

func init() {
	for _, w := range strings.Fields(`not no nor never none nothing neither cannot cant dont doesnt didnt isnt wasnt arent
		werent hasnt havent wont wouldnt shouldnt couldnt without lack lacks lacking missing partly mostly largely nearly almost
		mainly basically essentially roughly somewhat some most half but however although though yet except excluding apart
		besides only unless until if pending claims claimed claim says said report reported reportedly apparently seemingly seems
		seem appears appear looks look likely probably possibly perhaps maybe might may could should would assume assuming
		assumed presumably guess think believe hope hopefully expected error errors broken wrong invalid skip skipped bypass
		bypassed blocked todo tbd wip outstanding remaining remain remains still other than whereas aside while reject rejected
		issue issues problem problems risk caveat caveats reports according coder worker agent`) {
		markerWords[w] = true
	}
}

var (
	asciiWordRe = lazyre.New(`[a-z]+`)
	// partialRe finds a count of part of a whole: "2/3", "2 of 3", "3 条中 2 条".
	partialRe = lazyre.New(`(\d+)\s*/\s*(\d+)|(\d+)\s+(?:of|out of)\s+(\d+)|(\d+)\s*[条项个]\s*(?:中|里)(?:的|有)?\s*(\d+)`)
	// positiveRe is the Chinese allowlist: an optional subject, an optional
	// "already/all", one positive word, an optional 了/目标.
	positiveRe = lazyre.New(`^(?:(?:目标|任务|需求|全部检查项?|所有检查项?|检查清单|检查项?|全部|所有|整体)(?:均|都|全部|全都)?)?` +
		`(?:已经|已|均已|都已|全部|全都|均|都)?(?:达成|完成|满足|通过|达标)了?(?:目标)?$`)
	// labelRe is a label the judge may repeat before its word ("结论: 已达成").
	labelRe  = lazyre.New(`^(?:结论|判定|判断|状态|结果|verdict|conclusion|status|result)\s*[:：]\s*`)
	oneRe    = lazyre.New(`\b1\b`)
	zeroRe   = lazyre.New(`\b0\b`)
	quotedRe = lazyre.New(`“[^”]*”?|‘[^’]*’?|「[^」]*」?|『[^』]*』?|"[^"]*"?`)
	// clauseEnd ends the opening clause; an ASCII '.' only before a space or
	// the end, so "1.2" stays one clause.
	clauseEnd = lazyre.New(`[,，。;；!！、:：()（）\n—–]|\.(?:\s|$)| - `)
)

// positiveASCII and fillerASCII are the English allowlist: every word of
// the opening clause is a filler or a positive word, and one is positive
// ("Achieved", "The goal has been achieved", "All checks passed").
var positiveASCII = map[string]bool{"achieved": true, "passed": true, "pass": true, "done": true, "met": true,
	"complete": true, "completed": true, "accomplished": true, "succeeded": true, "satisfied": true}

var fillerASCII = map[string]bool{"the": true, "goal": true, "goals": true, "task": true, "is": true, "are": true,
	"was": true, "has": true, "have": true, "been": true, "all": true, "check": true, "checks": true, "everything": true,
	"fully": true, "it": true, "s": true}

// decoration is markup around the judge's word that says nothing.
var decoration = strings.NewReplacer("**", "", "__", "", "*", "", "`", "", "~", "", "#", "",
	"【", "", "】", "", "[", "", "]", "", "✅", "", "✔️", "", "✔", "", "☑️", "", "☑", "", "✓", "", "🎉", "", "👍", "")

// containsWord reports whether w occurs in lower (lowercased text): a
// substring for Chinese, a whole word (or word sequence) for ASCII, so
// "pass" is not in "password" or "bypass" and "done" not in "abandoned".
func containsWord(lower, w string) bool {
	if w == "" || w[0] >= 0x80 {
		return strings.Contains(lower, w)
	}
	for i := 0; ; {
		j := strings.Index(lower[i:], w)
		if j < 0 {
			return false
		}
		at := i + j
		end := at + len(w)
		if (at == 0 || !isASCIIWordByte(lower[at-1])) && (end == len(lower) || !isASCIIWordByte(lower[end])) {
			return true
		}
		i = at + 1
	}
}

func isASCIIWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func containsAny(lower string, words []string) bool {
	for _, w := range words {
		if containsWord(lower, w) {
			return true
		}
	}
	return false
}

// marked reports whether the conclusion holds any marker: a Chinese
// marker, an English marker word or family, "n't", or a partial count.
func marked(lower string) bool {
	for _, m := range markerSubstrings {
		if strings.Contains(lower, m) {
			return true
		}
	}
	if strings.Contains(lower, "n't") || strings.Contains(lower, "n’t") {
		return true
	}
	for _, w := range asciiWordRe().FindAllString(lower, -1) {
		if markerWords[w] {
			return true
		}
		for _, p := range markerPrefixes {
			if strings.HasPrefix(w, p) {
				return true
			}
		}
	}
	return partialCount(lower)
}

// partialCount reports a count of part of a whole ("2/3", "2 of 3", "3 条中
// 2 条"); a whole one ("3/3") is not partial.
func partialCount(s string) bool {
	for _, m := range partialRe().FindAllStringSubmatch(s, -1) {
		var nums []string
		for _, g := range m[1:] {
			if g != "" {
				nums = append(nums, g)
			}
		}
		a, _ := strconv.Atoi(nums[0])
		b, _ := strconv.Atoi(nums[1])
		if a != b {
			return true
		}
	}
	return false
}

// openingClause is the conclusion's first clause, stripped of decoration,
// a list marker and a repeated label: what must be a positive form.
func openingClause(lower string) string {
	s := decoration.Replace(lower)
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		for _, m := range []string{"- ", "+ ", "• "} {
			line = strings.TrimSpace(strings.TrimPrefix(line, m))
		}
		line = labelRe().ReplaceAllString(line, "")
		if line == "" {
			continue
		}
		if loc := clauseEnd().FindStringIndex(line); loc != nil {
			line = line[:loc[0]]
		}
		return strings.TrimSpace(line)
	}
	return ""
}

// positiveForm reports whether clause is an allowlisted positive form.
func positiveForm(clause string) bool {
	if positiveRe().MatchString(strings.Join(strings.Fields(clause), "")) {
		return true
	}
	words := strings.FieldsFunc(clause, func(r rune) bool { return !unicode.IsLetter(r) })
	positive := false
	for _, w := range words {
		switch {
		case positiveASCII[w]:
			positive = true
		case !fillerASCII[w]:
			return false
		}
	}
	return positive
}

// conclusionState reads the state of a conclusion (the 结论 sections, or
// the whole reply without headings), in this order after step 2:
// status words (unreachable first, then a positive word, achieved only in
// an allowlisted form with no marker; then the plain "not yet" words),
// then an isolated 1 or 0 (1 achieved only as the whole opening clause and
// unmarked), else "".
func conclusionState(concl string) string {
	lower := quotedRe().ReplaceAllString(strings.ToLower(concl), " ")
	if strings.TrimSpace(lower) == "" {
		return ""
	}
	if containsAny(lower, unreachableWords) {
		return Unreachable
	}
	hedged := marked(lower)
	if containsAny(lower, positiveWords) {
		if hedged || !positiveForm(openingClause(lower)) {
			return NotYet
		}
		return Achieved
	}
	switch {
	case containsAny(lower, negativeWords), zeroRe().MatchString(lower):
		return NotYet
	case oneRe().MatchString(lower):
		if hedged || openingClause(lower) != "1" {
			return NotYet
		}
		return Achieved
	}
	return ""
}
