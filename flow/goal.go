package flow

import "strconv"
import "strings"

import "github.com/flowerhq/flower/internal/docs"
import "github.com/flowerhq/flower/internal/lazyre"

// Goal section names, byte-exact.
const (
	GoalStatement = "目标"
	GoalChecks    = "检查清单"
)

// UnverifiableMark opens a check the goal-setting judge could not verify in
// this environment: "[此环境无法验证:…]".
const UnverifiableMark = "[此环境无法验证:"

var goalSections = []docs.Section{
	{Key: "statement", Name: GoalStatement, Aliases: []string{"目的", "Goal", "Statement"}},
	{Key: "checks", Name: GoalChecks, Aliases: []string{"验收清单", "判定清单", "检查项", "验收标准", "Checks", "Checklist"}},
}

// unverifiableRe finds the mark anywhere in a check ("- 在 macOS 上运行
// [此环境无法验证:没有 macOS]" is as unverifiable as a check that opens with
// it); half- and full-width brackets and colons are the same mark.
var unverifiableRe = lazyre.New(`[\[［]此环境无法验证[:：]`)

// goalTitle heads a goal file. It must not start with a section name: a
// heading with its body glued on ("# 目标与检查清单") reads as that section.
// legacyGoalTitle is the title older files carry; ParseGoal drops it.
const (
	goalTitle       = "# 任务目标与检查清单"
	legacyGoalTitle = "# 目标与检查清单\n"
)

// Goal is the goal guard's target: one statement plus a checklist the judge
// verifies after every round.
type Goal struct {
	Statement string
	Checks    []string
	// Path is where the goal was loaded from or written to.
	Path string
}

// ParseGoal parses the goal-setting judge's reply: a 目标 section and a
// 检查清单 list (one check per list item or line).
func ParseGoal(text string) Goal {
	text = strings.Replace(text, legacyGoalTitle, "", 1)
	s, _ := docs.Parse(text, goalSections)
	return Goal{Statement: s["statement"], Checks: docs.ListItems(s["checks"])}
}

// LoadGoal reads and parses the goal at path.
func LoadGoal(path string) (Goal, error) {
	text, err := docs.Read(path)
	if err != nil {
		return Goal{}, err
	}
	g := ParseGoal(text)
	g.Path = path
	return g, nil
}

// Missing returns the names of the empty sections.
func (g Goal) Missing() []string {
	var out []string
	if docs.CleanBody(g.Statement) == "" {
		out = append(out, GoalStatement)
	}
	if len(g.Checks) == 0 {
		out = append(out, GoalChecks)
	}
	return out
}

// Complete reports whether the goal has a statement and at least one check.
func (g Goal) Complete() bool { return len(g.Missing()) == 0 }

// Unverifiable returns the checks carrying the mark "[此环境无法验证:…]"
// anywhere in their text.
func (g Goal) Unverifiable() []string {
	var out []string
	for _, c := range g.Checks {
		if unverifiableRe().MatchString(c) {
			out = append(out, c)
		}
	}
	return out
}

// Amend returns a copy whose statement carries the person's change as
// "【修订】said"; the checks are kept (the next round's judge reads both).
// Amending with words already in the statement changes nothing.
func (g Goal) Amend(said string) Goal {
	said = strings.TrimSpace(said)
	out := Goal{Statement: g.Statement, Checks: append([]string(nil), g.Checks...), Path: g.Path}
	if said == "" || strings.Contains(g.Statement, said) {
		return out
	}
	if strings.TrimSpace(out.Statement) == "" {
		out.Statement = "【修订】" + said
	} else {
		out.Statement = strings.TrimRight(out.Statement, "\n") + "\n\n【修订】" + said
	}
	return out
}

// ToMarkdown renders the goal for people (and is what Write stores).
func (g Goal) ToMarkdown() string {
	var sb strings.Builder
	sb.WriteString(goalTitle + "\n\n## " + GoalStatement + "\n\n" + docs.OrPlaceholder(g.Statement) + "\n\n## " + GoalChecks + "\n\n")
	if len(g.Checks) == 0 {
		sb.WriteString(docs.Placeholder + "\n")
	}
	for _, c := range g.Checks {
		sb.WriteString("- [ ] " + c + "\n")
	}
	return sb.String()
}

// PromptBlock renders the goal for the judge and the worker.
func (g Goal) PromptBlock() string {
	var sb strings.Builder
	sb.WriteString("<目标>\n" + docs.OrPlaceholder(g.Statement) + "\n</目标>\n<检查清单>\n")
	for i, c := range g.Checks {
		sb.WriteString(strconv.Itoa(i+1) + ". " + c + "\n")
	}
	sb.WriteString("</检查清单>")
	return sb.String()
}

// Write freezes the goal to path and returns it with Path set.
func (g Goal) Write(path string) (Goal, error) {
	if err := docs.Write(path, g.ToMarkdown()); err != nil {
		return g, err
	}
	g.Path = path
	return g, nil
}
