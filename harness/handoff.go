package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/flowerhq/flower/internal/atomicfile"
	"github.com/flowerhq/flower/internal/mdsections"
	"github.com/flowerhq/flower/internal/redact"
	"github.com/flowerhq/flower/internal/textclip"
)

// Handoff is the document a session writes when its context is full: five
// sections, of which only 在做什么 and 下一步 are required
// (demanding dead ends would make the model invent some). Step is the step
// it belongs to. This is the one implementation; flow aliases it.
type Handoff struct {
	Doing    string `json:"doing"`
	Decided  string `json:"decided"`
	Deadends string `json:"deadends"`
	Next     string `json:"next"`
	Scene    string `json:"scene"`
	Step     string `json:"step"`
	// Path is where the handoff was loaded from or written to.
	Path string `json:"path,omitempty"`
	// Degraded marks a handoff assembled mechanically (DegradedHandoff).
	Degraded bool `json:"degraded"`
}

// Handoff section names, byte-exact: the model reads and writes these.
const (
	HandoffDoing    = "在做什么"
	HandoffDecided  = "已定结论"
	HandoffDeadends = "走不通的路"
	HandoffNext     = "下一步"
	HandoffScene    = "现场"
)

// handoffSections are the sections in order, with the aliases the parser
// also accepts (matched longest first by mdsections).
var handoffSections = []mdsections.Section{
	{Key: "doing", Name: HandoffDoing, Aliases: []string{"正在做", "当前任务", "Doing"}},
	{Key: "decided", Name: HandoffDecided, Aliases: []string{"已定的决定", "已决定", "决定", "Decided", "Decisions"}},
	{Key: "deadends", Name: HandoffDeadends, Aliases: []string{"死路", "不通的路", "Dead ends", "Deadends"}},
	{Key: "next", Name: HandoffNext, Aliases: []string{"接下来", "Next"}},
	{Key: "scene", Name: HandoffScene, Aliases: []string{"现场状态", "Scene", "State"}},
}

// HandoffPrompt is what the session whose context is full is asked to write
// its own handoff with ({used} and {window} are filled in). It is no new role:
// only that session has the context.
const HandoffPrompt = `你的上下文已用 {used} / {window} tokens,快满了。停下手上的事,不要再调用工具,为接手你的新会话写一份交接文档。只写下面五节,用这五个标题:

## 在做什么
这一步的任务是什么,做到哪了。

## 已定结论
已经拍板的决定和理由,接手的人不要再推翻。

## 走不通的路
试过但不行的做法和原因;没有就写"无",不要编。

## 下一步
接手后第一件要做的事,具体到文件和命令。

## 现场
关键文件路径、产物位置、正在跑的东西、未提交的改动。`

// PromptBlockIntro opens every PromptBlock; the successor session is
// recognisable by it.
const PromptBlockIntro = "你接手的是一个因上下文满了而换新会话的任务。下面是上一个会话写的交接文档,照「下一步」继续,不要从头再来。"

// DegradedNote is the PromptBlock line of a Degraded handoff.
const DegradedNote = "(上一个会话没能写出交接文档,这一份是按原任务机械拼出来的。)"

// ParseHandoff parses a model reply into a Handoff for step with the
// heading rules of mdsections: aliases longest first, the first duplicate
// with content wins, an unclosed code fence drops the rest, "(未填)" counts
// as empty.
func ParseHandoff(text, step string) Handoff {
	s, _ := mdsections.Parse(text, handoffSections)
	return Handoff{Doing: s["doing"], Decided: s["decided"], Deadends: s["deadends"], Next: s["next"], Scene: s["scene"], Step: step}
}

// LoadHandoff reads and parses the handoff at path; Step comes from the
// "# 交接: <step>" title ToMarkdown writes. A missing file gives an error that
// satisfies errors.Is(err, fs.ErrNotExist).
func LoadHandoff(path string) (Handoff, error) {
	text, err := mdsections.Read(path)
	if err != nil {
		return Handoff{}, err
	}
	first, _, _ := strings.Cut(strings.TrimLeft(text, "\ufeff \n"), "\n")
	step := ""
	if t, ok := strings.CutPrefix(strings.TrimSpace(first), "# 交接:"); ok {
		step = strings.TrimSpace(t)
	}
	h := ParseHandoff(text, step)
	h.Path = path
	return h, nil
}

// values are the section bodies in handoffSections order.
func (h Handoff) values() []string {
	return []string{h.Doing, h.Decided, h.Deadends, h.Next, h.Scene}
}

// Missing returns the names of the empty required sections (在做什么, 下一步).
func (h Handoff) Missing() []string {
	var m []string
	if mdsections.CleanBody(h.Doing) == "" {
		m = append(m, HandoffDoing)
	}
	if mdsections.CleanBody(h.Next) == "" {
		m = append(m, HandoffNext)
	}
	return m
}

// Complete reports whether 在做什么 and 下一步 have content.
func (h Handoff) Complete() bool { return len(h.Missing()) == 0 }

// sections lists the names of the filled sections.
func (h Handoff) sections() []string {
	var s []string
	for i, v := range h.values() {
		if mdsections.CleanBody(v) != "" {
			s = append(s, handoffSections[i].Name)
		}
	}
	return s
}

// ToMarkdown is the document for people, written to notes/交接-<step>.md;
// an empty section shows "(未填)".
func (h Handoff) ToMarkdown() string {
	title := "交接"
	if h.Step != "" {
		title += ": " + h.Step
	}
	return mdsections.Render(title, handoffSections, h.values())
}

// PromptBlock is the first prompt of the successor session: the intro, the
// step, the degraded note, where the document is on disk, and the filled
// sections inside <交接>.
func (h Handoff) PromptBlock() string {
	var b strings.Builder
	b.WriteString(PromptBlockIntro + "\n")
	if h.Step != "" {
		b.WriteString("步骤: " + h.Step + "\n")
	}
	if h.Degraded {
		b.WriteString(DegradedNote + "\n")
	}
	if h.Path != "" {
		b.WriteString("交接文档也在磁盘上: " + h.Path + "\n")
	}
	b.WriteString("<交接>\n")
	for i, v := range h.values() {
		if mdsections.CleanBody(v) == "" {
			continue
		}
		b.WriteString("【" + handoffSections[i].Name + "】\n" + strings.TrimSpace(v) + "\n")
	}
	b.WriteString("</交接>")
	return b.String()
}

// DegradedHandoff assembles a handoff mechanically when none could be
// written: 现场 holds the first 1200 characters of the
// original task.
func DegradedHandoff(step, prompt, why string) Handoff {
	doing := "上一个会话的上下文满了,没能写出交接文档。原任务见「现场」。"
	if why != "" {
		doing += "原因: " + why
	}
	return Handoff{
		Doing:    doing,
		Next:     "重新读原任务,查看工作区现状,从还没完成的部分接着做。",
		Scene:    textclip.Runes(prompt, 1200),
		Step:     step,
		Degraded: true,
	}
}

// handoffFileName is 交接-<step>.md, with path separators in the step name
// replaced.
func handoffFileName(step string) string {
	return "交接-" + strings.NewReplacer("/", "_", "\\", "_", string(os.PathSeparator), "_").Replace(step) + ".md"
}

// Write stores the handoff as <notes>/交接-<step>.md; an older handoff of the
// same step moves to <notes>/archive/交接/<name>-<timestamp>.md first.
func (h *Handoff) Write(notesDir string) error { return h.write(notesDir, nil) }

// write is Write with secrets replaced by red; the note is 0600.
func (h *Handoff) write(notesDir string, red *redact.Redactor) error {
	if err := os.MkdirAll(notesDir, 0o700); err != nil {
		return fmt.Errorf("harness: handoff: %w", err)
	}
	if err := atomicfile.NotALink(notesDir); err != nil {
		return fmt.Errorf("harness: handoff: %w", err)
	}
	name := handoffFileName(h.Step)
	path := filepath.Join(notesDir, name)
	if _, err := os.Stat(path); err == nil {
		arch := filepath.Join(notesDir, "archive", "交接")
		if err := os.MkdirAll(arch, 0o700); err != nil {
			return fmt.Errorf("harness: handoff archive: %w", err)
		}
		stamp := time.Now().Format("20060102-150405.000000000")
		dst := filepath.Join(arch, strings.TrimSuffix(name, ".md")+"-"+stamp+".md")
		if err := os.Rename(path, dst); err != nil {
			return fmt.Errorf("harness: handoff archive: %w", err)
		}
	}
	if err := atomicfile.Write(path, []byte(red.String(h.ToMarkdown())), 0o600); err != nil {
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
