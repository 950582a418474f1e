package flow

import (
	"strconv"
	"strings"

	"github.com/flowerhq/flower/internal/lazyre"
)

// How a free-text verdict is read (see ParseVerdict and the package doc).
// flower's own judges give a typed verdict (typed.go); this reader is kept
// for library users with free-text judges, and it is conservative: it says
// achieved only for a conclusion that is exactly one short positive form,
// in a reply that holds nothing negative anywhere — no failing section with
// content, no ❌ or unchecked box, no `false`, no second conclusion, and no
// marker of negation, hedging, partiality, contrast or doubt in any of its
// words (quoted ones included: a quotation can carry the "no"). A positive
// with an explanation may come out not_yet; a "no" never comes out yes.

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

// negativeSymbols say "no" or "not done" wherever they stand: a cross, a
// warning, an unchecked box.
var negativeSymbols = []string{"❌", "✗", "✘", "✖", "✕", "❎", "🚫", "⛔", "⚠", "☐", "⬜", "🔴", "[ ]", "［ ］", "[]",
	"挂", "撤", "更正", "改判", "应为", "唯一", "例外", "前提", "条件", "根据"}

var (
	// partialRe finds a count of part of a whole: "2/3", "2 of 3", "3 条中 2
	// 条", "通过 4 项，共 5 项".
	partialRe = lazyre.New(`(\d+)\s*/\s*(\d+)|(\d+)\s+(?:of|out of)\s+(\d+)|(\d+)\s*[条项个]\s*(?:中|里)(?:的|有)?\s*(\d+)|(\d+)[^\d\n]{0,12}?共\s*(\d+)`)
	// failingHeadingRe is a failing section's heading line (its inline body,
	// if any, follows): removed before the reply is searched for markers, so
	// that only what the section holds counts.
	failingHeadingRe = lazyre.New(`(?im)^[ \t]*(?:#{1,6}[ \t]*)?(?:\d+[.)、][ \t]*)?(?:\*\*|__)?[「【]?` +
		`(?:未通过的检查|未通过项|未通过|不通过|失败的检查|失败项|失败|failed checks|failing checks|failed|failing|failures)` +
		`[」】]?(?:\*\*|__)?[ \t]*(?:[:：][ \t]*(?:\*\*|__)?|$)`)
	// listMarkRe is a list item's marker.
	listMarkRe = lazyre.New(`^(?:[-*+•]|\d+[.)、])\s*`)
	// labelRe is a label the judge may repeat before its word ("结论: 已达成").
	labelRe = lazyre.New(`^(?:结论|判定|verdict|conclusion)\s*[:：]\s*`)
)

// positiveForms are the only conclusions read as achieved, after
// normalize: exactly one of them and nothing else.
var positiveForms = map[string]bool{"已达成": true, "达成": true, "目标已达成": true, "已通过": true, "通过": true, "全部通过": true,
	"achieved": true, "pass": true, "passed": true, "yes": true, "true": true, "1": true}

// noneForms are a failing section's explicit "nothing failed".
var noneForms = map[string]bool{"无": true, "没有": true, "空": true, "暂无": true, "无(全部通过)": true, "无（全部通过）": true,
	"none": true, "n/a": true, "na": true, "nothing": true, "-": true, "—": true, "": true}

// decoration is markup around the judge's word that says nothing.
var decoration = strings.NewReplacer("**", "", "__", "", "*", "", "`", "", "~", "", "#", "",
	"【", "", "】", "", "✅", "", "✔️", "", "✔", "", "☑️", "", "☑", "", "✓", "", "🎉", "", "👍", "")

// normalize is one line of the judge's as compared with a form: markup, a
// list marker, a repeated label and closing punctuation removed, spaces
// trimmed, lowercased.
func normalize(line string) string {
	s := strings.ToLower(strings.TrimSpace(decoration.Replace(line)))
	s = strings.TrimSpace(listMarkRe().ReplaceAllString(s, ""))
	s = strings.TrimSpace(labelRe().ReplaceAllString(s, ""))
	return strings.TrimSpace(strings.TrimRight(s, "。.!！;；,， \t"))
}

// exactlyPositive reports whether concl is one positive form, alone.
func exactlyPositive(concl string) bool {
	var lines []string
	for _, l := range strings.Split(concl, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return len(lines) == 1 && positiveForms[normalize(lines[0])]
}

// explicitNone reports whether a failing section's body says nothing failed.
func explicitNone(body string) bool {
	for _, l := range strings.Split(body, "\n") {
		if !noneForms[normalize(l)] {
			return false
		}
	}
	return true
}

// withoutNone is text with its failing headings reduced to their inline
// body and its lines that are an explicit none dropped: what is left is
// searched for markers.
func withoutNone(text string) string {
	var keep []string
	for _, l := range strings.Split(text, "\n") {
		if lower := strings.ToLower(l); strings.Contains(lower, "通过") || strings.Contains(lower, "失败") || strings.Contains(lower, "fail") {
			l = failingHeadingRe().ReplaceAllString(l, "")
		}
		if !noneForms[normalize(l)] {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

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
	for _, w := range asciiWords(lower) {
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
	if !strings.Contains(s, "/") && !strings.Contains(s, "of") && !strings.Contains(s, "共") && !strings.Contains(s, "中") && !strings.Contains(s, "里") {
		return false // none of the patterns can match: skip the regexp
	}
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

// negative reports whether text says "no" anywhere: a negative symbol, a
// marker (marked), a second conclusion.
func negative(text string) bool {
	lower := strings.ToLower(withoutNone(text))
	for _, m := range negativeSymbols {
		if strings.Contains(lower, m) {
			return true
		}
	}
	if containsWord(lower, "false") || marked(lower) {
		return true
	}
	labels := 0 // a second conclusion anywhere (a correction, a retraction) is a "no"
	for _, l := range conclusionLabels {
		labels += strings.Count(lower, l)
	}
	return labels > 1
}

// conclusionLabels are the words that name a conclusion.
var conclusionLabels = []string{"结论", "判定", "判断", "verdict", "conclusion"}

// asciiWords are the runs of a-z in lower.
func asciiWords(lower string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(lower); i++ {
		if i < len(lower) && lower[i] >= 'a' && lower[i] <= 'z' {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, lower[start:i])
			start = -1
		}
	}
	return out
}
