package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Handoff is the document a session writes when its context is full (seed
// Handoff): five sections, of which doing and next are required.
type Handoff struct {
	Doing    string `json:"doing"`
	Decided  string `json:"decided"`
	Deadends string `json:"deadends"`
	Next     string `json:"next"`
	Scene    string `json:"scene"`
	Step     string `json:"step"`
	Path     string `json:"path,omitempty"`
	// Degraded marks a handoff assembled mechanically (Degraded()).
	Degraded bool `json:"degraded"`
}

// handoffSections are the byte-exact section names, in order.
var handoffSections = []struct{ key, title string }{
	{"doing", "在做什么"},
	{"decided", "已定结论"},
	{"deadends", "走不通的路"},
	{"next", "下一步"},
	{"scene", "现场"},
}

const missingMark = "(未填)"

// HandoffPrompt is what the full session is told to write its own handoff
// with ({used} and {window} are replaced by the token figures). It is not a
// new role: only this session has the context.
const HandoffPrompt = `Your context is nearly full ({used} of {window} tokens). Stop working now: a fresh session will continue from what you write here, and it sees nothing else.
Write the handoff document, exactly these five sections as Markdown headings, in this order:

## 在做什么
The task and where you are in it.

## 已定结论
What is decided or done, with file paths.

## 走不通的路
Approaches that failed and why (leave empty if none; do not invent).

## 下一步
The next concrete actions, in order.

## 现场
State the successor must know: files being edited, commands to re-run, open questions.

Use no tools. Answer with the document only.`

var headingRe = regexp.MustCompile(`^\s*(?:#{1,6}\s*|\*\*|\d+[.)、]\s*)?(在做什么|已定结论|走不通的路|下一步|现场)(?:\*\*)?\s*[:：]?\s*(.*)$`)

// ParseHandoff reads the five sections from a model's answer. A section
// named twice keeps the first one with content; the placeholder (未填)
// counts as empty.
func ParseHandoff(text, step string) Handoff {
	got := map[string]*strings.Builder{}
	cur := ""
	for _, line := range strings.Split(text, "\n") {
		if m := headingRe.FindStringSubmatch(line); m != nil {
			cur = ""
			for _, s := range handoffSections {
				if s.title == m[1] {
					cur = s.key
				}
			}
			if b, ok := got[cur]; ok && strings.TrimSpace(b.String()) != "" {
				cur = "" // first section with content wins
				continue
			}
			got[cur] = &strings.Builder{}
			if m[2] != "" {
				got[cur].WriteString(m[2] + "\n")
			}
			continue
		}
		if cur != "" {
			got[cur].WriteString(line + "\n")
		}
	}
	val := func(k string) string {
		b, ok := got[k]
		if !ok {
			return ""
		}
		s := strings.TrimSpace(b.String())
		if s == missingMark {
			return ""
		}
		return s
	}
	return Handoff{Doing: val("doing"), Decided: val("decided"), Deadends: val("deadends"), Next: val("next"), Scene: val("scene"), Step: step}
}

func (h Handoff) field(k string) string {
	switch k {
	case "doing":
		return h.Doing
	case "decided":
		return h.Decided
	case "deadends":
		return h.Deadends
	case "next":
		return h.Next
	default:
		return h.Scene
	}
}

// Missing lists the required sections (doing, next) that are empty.
func (h Handoff) Missing() []string {
	var m []string
	if strings.TrimSpace(h.Doing) == "" {
		m = append(m, "在做什么")
	}
	if strings.TrimSpace(h.Next) == "" {
		m = append(m, "下一步")
	}
	return m
}

// Complete reports whether doing and next are filled.
func (h Handoff) Complete() bool { return len(h.Missing()) == 0 }

// Sections lists the names of the filled sections.
func (h Handoff) Sections() []string {
	var s []string
	for _, sec := range handoffSections {
		if strings.TrimSpace(h.field(sec.key)) != "" {
			s = append(s, sec.title)
		}
	}
	return s
}

// ToMarkdown is the document for humans, written to notes/交接-<step>.md.
func (h Handoff) ToMarkdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# 交接 %s\n", h.Step)
	for _, sec := range handoffSections {
		v := strings.TrimSpace(h.field(sec.key))
		if v == "" {
			v = missingMark
		}
		fmt.Fprintf(&b, "\n## %s\n\n%s\n", sec.title, v)
	}
	return b.String()
}

// PromptBlock is the first prompt of the successor session.
func (h Handoff) PromptBlock() string {
	var b strings.Builder
	fmt.Fprintf(&b, "You continue step %q from a previous session whose context was full. Its handoff follows; trust it, and do not redo what it lists as done.\n", h.Step)
	if h.Degraded {
		b.WriteString("(The previous session could not write its handoff; this one was assembled mechanically from the original task.)\n")
	}
	if h.Path != "" {
		fmt.Fprintf(&b, "The handoff is also on disk: %s\n", h.Path)
	}
	for _, sec := range handoffSections {
		if v := strings.TrimSpace(h.field(sec.key)); v != "" {
			fmt.Fprintf(&b, "\n## %s\n%s\n", sec.title, v)
		}
	}
	return b.String()
}

// DegradedHandoff assembles a handoff mechanically when none could be
// written (seed degraded): scene holds the first 1200 characters of the
// original task.
func DegradedHandoff(step, prompt, why string) Handoff {
	doing := "Continue the original task of step " + step + "; the previous session ran out of context"
	if why != "" {
		doing += " (" + why + ")"
	}
	return Handoff{
		Doing:    doing + ".",
		Next:     "Look at the workspace and the workbench to see what is already done, then finish the task below.",
		Scene:    cut(prompt, 1200),
		Step:     step,
		Degraded: true,
	}
}

// HandoffFileName is 交接-<step>.md, with path separators in the step name
// replaced.
func HandoffFileName(step string) string {
	return "交接-" + strings.NewReplacer("/", "_", "\\", "_", string(os.PathSeparator), "_").Replace(step) + ".md"
}

// Write stores the handoff as <notes>/交接-<step>.md; an older handoff of the
// same step moves to <notes>/archive/交接/<name>-<timestamp>.md first.
func (h *Handoff) Write(notesDir string) error {
	if err := os.MkdirAll(notesDir, 0o755); err != nil {
		return fmt.Errorf("harness: handoff: %w", err)
	}
	name := HandoffFileName(h.Step)
	path := filepath.Join(notesDir, name)
	if _, err := os.Stat(path); err == nil {
		arch := filepath.Join(notesDir, "archive", "交接")
		if err := os.MkdirAll(arch, 0o755); err != nil {
			return fmt.Errorf("harness: handoff archive: %w", err)
		}
		stamp := time.Now().Format("20060102-150405.000000000")
		dst := filepath.Join(arch, strings.TrimSuffix(name, ".md")+"-"+stamp+".md")
		if err := os.Rename(path, dst); err != nil {
			return fmt.Errorf("harness: handoff archive: %w", err)
		}
	}
	if err := writeFileAtomic(path, []byte(h.ToMarkdown()), 0o644); err != nil {
		return fmt.Errorf("harness: handoff: %w", err)
	}
	h.Path = path
	return nil
}

// ArchivedHandoffs lists the archived handoffs of notesDir, sorted.
func ArchivedHandoffs(notesDir string) []string {
	m, _ := filepath.Glob(filepath.Join(notesDir, "archive", "交接", "*.md"))
	sort.Strings(m)
	return m
}
