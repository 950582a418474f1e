package flow

import (
	"strings"

	"github.com/flowerhq/flower/internal/mdsections"
)

// Brief section names, byte-exact.
const (
	BriefGoal     = "目标"
	BriefAccept   = "验收标准"
	BriefBounds   = "边界"
	BriefUnknowns = "未知与假设"
)

// briefSections is the fixed order goal → accept → bounds → unknowns.
var briefSections = []mdsections.Section{
	{Key: "goal", Name: BriefGoal, Aliases: []string{"目的", "诉求", "Goal", "Goals"}},
	{Key: "accept", Name: BriefAccept, Aliases: []string{"验收条件", "验收", "完成标准", "Acceptance criteria", "Acceptance"}},
	{Key: "bounds", Name: BriefBounds, Aliases: []string{"范围", "约束", "不做什么", "Bounds", "Boundaries", "Scope"}},
	{Key: "unknowns", Name: BriefUnknowns, Aliases: []string{"未知与假定", "假设", "未知", "Unknowns and assumptions", "Assumptions", "Unknowns"}},
}

// Brief is the frozen requirement a clarifier produces: exactly four sections
// in the fixed order 目标 / 验收标准 / 边界 / 未知与假设.
type Brief struct {
	Goal     string
	Accept   string
	Bounds   string
	Unknowns string
	// Path is where the brief was loaded from or written to; it takes no part
	// in comparing two briefs.
	Path string
}

// ParseBrief parses a model reply into a Brief. The rules: an unclosed ``` or
// ~~~ fence drops everything after it; headings may be "## 目标", "**目标**",
// "目标:" or "3. 边界", with text right after them; aliases are tried longest
// first; of repeated sections the first one with content wins; a section
// holding only "(未填)" stays missing.
func ParseBrief(text string) Brief {
	s, _ := mdsections.Parse(text, briefSections)
	return Brief{Goal: s["goal"], Accept: s["accept"], Bounds: s["bounds"], Unknowns: s["unknowns"]}
}

// LoadBrief reads and parses the brief at path. A missing file gives an error
// that satisfies errors.Is(err, fs.ErrNotExist).
func LoadBrief(path string) (Brief, error) {
	text, err := mdsections.Read(path)
	if err != nil {
		return Brief{}, err
	}
	b := ParseBrief(text)
	b.Path = path
	return b, nil
}

func (b Brief) values() []string { return []string{b.Goal, b.Accept, b.Bounds, b.Unknowns} }

// Missing returns the Chinese names of the empty sections, in section order.
func (b Brief) Missing() []string {
	var out []string
	for i, v := range b.values() {
		if mdsections.CleanBody(v) == "" {
			out = append(out, briefSections[i].Name)
		}
	}
	return out
}

// Complete reports whether all four sections have content.
func (b Brief) Complete() bool { return len(b.Missing()) == 0 }

// equal compares the four sections; Path is ignored.
func (b Brief) equal(o Brief) bool {
	b.Path, o.Path = "", ""
	return b == o
}

// ToMarkdown renders the brief for people: a title and the four sections,
// "(未填)" standing in for an empty one.
func (b Brief) ToMarkdown() string {
	return mdsections.Render("需求", briefSections, b.values())
}

// PromptBlock renders the brief for a downstream model.
func (b Brief) PromptBlock() string {
	var sb strings.Builder
	sb.WriteString("<需求>\n")
	for i, v := range b.values() {
		sb.WriteString("【" + briefSections[i].Name + "】\n" + mdsections.OrPlaceholder(v) + "\n")
	}
	sb.WriteString("</需求>")
	return sb.String()
}

// Write freezes the brief to path (ToMarkdown) and returns it with Path set.
func (b Brief) Write(path string) (Brief, error) {
	if err := mdsections.Write(path, b.ToMarkdown()); err != nil {
		return b, err
	}
	b.Path = path
	return b, nil
}

// Amend returns the brief with said appended to its 目标 section as
// "【label】said" (the person's new words are a requirement, so the goal is
// where the goal-setting judge and the coordinator will read them), unless
// said already appears in the brief: amending twice writes nothing twice.
func (b Brief) Amend(said, label string) Brief {
	said = strings.TrimSpace(said)
	if said == "" || strings.Contains(strings.Join(b.values(), "\n"), said) {
		return b
	}
	line := said
	if label != "" {
		line = "【" + label + "】" + said
	}
	if strings.TrimSpace(b.Goal) == "" {
		b.Goal = line
	} else {
		b.Goal = strings.TrimRight(b.Goal, "\n") + "\n\n" + line
	}
	return b
}
