package flow

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/internal/lazyre"
	"github.com/flowerhq/flower/internal/mdsections"
)

// Goal section names, byte-exact.
const (
	goalStatement = "目标"
	goalChecks    = "检查清单"
)

// UnverifiableMark opens a check the goal-setting judge could not verify in
// this environment: "[此环境无法验证:…]".
const UnverifiableMark = "[此环境无法验证:"

var goalSections = []mdsections.Section{
	{Key: "statement", Name: goalStatement, Aliases: []string{"目的", "Goal", "Statement"}},
	{Key: "checks", Name: goalChecks, Aliases: []string{"验收清单", "判定清单", "检查项", "验收标准", "Checks", "Checklist"}},
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
	s, _ := mdsections.Parse(text, goalSections)
	return Goal{Statement: s["statement"], Checks: mdsections.ListItems(s["checks"])}
}

// LoadGoal reads and parses the goal at path.
func LoadGoal(path string) (Goal, error) {
	f, err := loadFrozen(path)
	return f.Goal, err
}

// loadFrozen reads the goal at path together with the text it was read from.
func loadFrozen(path string) (FrozenGoal, error) {
	text, err := mdsections.Read(path)
	if err != nil {
		return FrozenGoal{}, err
	}
	g := ParseGoal(text)
	g.Path = path
	return freeze(g, text), nil
}

// FrozenGoal is the goal every judge round is given: the Goal, the exact
// Text it was frozen as (what the goal step wrote to Goal.Path, or read
// from it) and that text's SHA256. The goal step puts it into ctx
// (FrozenGoalKey) and records it in the run as Event("goal") {state
// "frozen", path, sha256, text}; a file that later differs is reported, never
// believed (see WithGoal).
type FrozenGoal struct {
	Goal   Goal
	Text   string
	SHA256 string
}

// same reports whether o has g's statement and checks (Path aside).
func (g Goal) same(o Goal) bool {
	return g.Statement == o.Statement && slices.Equal(g.Checks, o.Checks)
}

// Complete reports whether the frozen goal is complete.
func (f FrozenGoal) Complete() bool { return f.Goal.Complete() }

// freeze is g frozen as text.
func freeze(g Goal, text string) FrozenGoal {
	return FrozenGoal{Goal: g, Text: text, SHA256: sha256Hex(text)}
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// onDisk compares the file at Goal.Path with the frozen text: the sha256 of
// what it holds now ("" when it cannot be read) and whether that is the
// frozen text. A goal frozen without a file (Path "") is always the same.
func (f FrozenGoal) onDisk() (sha string, same bool) {
	if f.Goal.Path == "" {
		return f.SHA256, true
	}
	text, err := mdsections.Read(f.Goal.Path)
	if err != nil {
		return "", false
	}
	sha = sha256Hex(text)
	return sha, sha == f.SHA256
}

// event is the run's record of the frozen goal (Event("goal")), or with
// state GoalChanged, of a file that no longer holds it.
func (f FrozenGoal) event(step, state, disk string) harness.Event {
	ev := eventOf(harness.EventGoal, step, harness.GoalEvent{State: state, Path: f.Goal.Path, SHA256: f.SHA256})
	// Each state carries its own field even when it is empty (omitempty
	// would drop it): a changed goal whose file is gone says disk_sha256 "".
	if state == harness.GoalFrozen {
		ev.Data["text"] = f.Text
	} else {
		ev.Data["disk_sha256"] = disk
	}
	return ev
}

// Missing returns the names of the empty sections.
func (g Goal) Missing() []string {
	var out []string
	if mdsections.CleanBody(g.Statement) == "" {
		out = append(out, goalStatement)
	}
	if len(g.Checks) == 0 {
		out = append(out, goalChecks)
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
	sb.WriteString(goalTitle + "\n\n## " + goalStatement + "\n\n" + mdsections.OrPlaceholder(g.Statement) + "\n\n## " + goalChecks + "\n\n")
	if len(g.Checks) == 0 {
		sb.WriteString(mdsections.Placeholder + "\n")
	}
	for _, c := range g.Checks {
		sb.WriteString("- [ ] " + c + "\n")
	}
	return sb.String()
}

// PromptBlock renders the goal for the judge and the worker.
func (g Goal) PromptBlock() string {
	var sb strings.Builder
	sb.WriteString("<目标>\n" + mdsections.OrPlaceholder(g.Statement) + "\n</目标>\n<检查清单>\n")
	for i, c := range g.Checks {
		sb.WriteString(strconv.Itoa(i+1) + ". " + c + "\n")
	}
	sb.WriteString("</检查清单>")
	return sb.String()
}

// Write freezes the goal to path and returns it with Path set.
func (g Goal) Write(path string) (Goal, error) {
	f, err := g.writeFrozen(path)
	return f.Goal, err
}

// writeFrozen is Write returning the goal frozen as the text written.
func (g Goal) writeFrozen(path string) (FrozenGoal, error) {
	text := g.ToMarkdown()
	if err := mdsections.Write(path, text); err != nil {
		return freeze(g, text), err
	}
	g.Path = path
	return freeze(g, text), nil
}
