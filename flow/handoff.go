package flow

import (
	"strings"
	"unicode/utf8"
)

// Handoff section names, byte-exact.
const (
	HandoffDoing    = "在做什么"
	HandoffDecided  = "已定结论"
	HandoffDeadends = "走不通的路"
	HandoffNext     = "下一步"
	HandoffScene    = "现场"
)

var handoffSections = []sectionDef{
	{key: "doing", name: HandoffDoing, aliases: []string{"正在做", "当前任务", "Doing"}},
	{key: "decided", name: HandoffDecided, aliases: []string{"已定的决定", "已决定", "决定", "Decided", "Decisions"}},
	{key: "deadends", name: HandoffDeadends, aliases: []string{"死路", "不通的路", "Dead ends", "Deadends"}},
	{key: "next", name: HandoffNext, aliases: []string{"接下来", "Next"}},
	{key: "scene", name: HandoffScene, aliases: []string{"现场状态", "Scene", "State"}},
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

// Handoff is the document a session writes when its context is full: five
// sections, of which only 在做什么 and 下一步 are required (demanding dead ends
// would make the model invent some). Step is the step it belongs to.
type Handoff struct {
	Doing    string
	Decided  string
	Deadends string
	Next     string
	Scene    string
	Step     string
	// Path is where the handoff was loaded from or written to.
	Path string
}

// ParseHandoff parses a model reply into a Handoff with the same heading
// rules as ParseBrief.
func ParseHandoff(text string) Handoff {
	s, _ := parseSections(text, handoffSections)
	return Handoff{Doing: s["doing"], Decided: s["decided"], Deadends: s["deadends"], Next: s["next"], Scene: s["scene"]}
}

// LoadHandoff reads and parses the handoff at path.
func LoadHandoff(path string) (Handoff, error) {
	text, err := readDoc(path)
	if err != nil {
		return Handoff{}, err
	}
	h := ParseHandoff(text)
	h.Path = path
	return h, nil
}

// DegradedHandoff assembles a handoff mechanically when none could be
// written: scene carries the first 1200 characters of the original task.
func DegradedHandoff(step, prompt, why string) Handoff {
	scene := prompt
	if utf8.RuneCountInString(scene) > 1200 {
		scene = string([]rune(scene)[:1200])
	}
	doing := "上一个会话的上下文满了,没能写出交接文档。原任务见「现场」。"
	if why != "" {
		doing += "原因: " + why
	}
	return Handoff{Doing: doing, Next: "重新读原任务,查看工作区现状,从还没完成的部分接着做。", Scene: scene, Step: step}
}

func (h Handoff) values() []string {
	return []string{h.Doing, h.Decided, h.Deadends, h.Next, h.Scene}
}

// Missing returns the names of the empty required sections (在做什么, 下一步).
func (h Handoff) Missing() []string {
	var out []string
	if cleanBody(h.Doing) == "" {
		out = append(out, HandoffDoing)
	}
	if cleanBody(h.Next) == "" {
		out = append(out, HandoffNext)
	}
	return out
}

// Complete reports whether 在做什么 and 下一步 have content.
func (h Handoff) Complete() bool { return len(h.Missing()) == 0 }

// ToMarkdown renders the handoff for people.
func (h Handoff) ToMarkdown() string {
	var sb strings.Builder
	sb.WriteString("# 交接")
	if h.Step != "" {
		sb.WriteString(": " + h.Step)
	}
	sb.WriteString("\n")
	for i, v := range h.values() {
		sb.WriteString("\n## " + handoffSections[i].name + "\n\n" + orPlaceholder(v) + "\n")
	}
	return sb.String()
}

// PromptBlock renders the handoff as the first prompt of the fresh session.
func (h Handoff) PromptBlock() string {
	var sb strings.Builder
	sb.WriteString("你接手的是一个因上下文满了而换新会话的任务。下面是上一个会话写的交接文档,照「下一步」继续,不要从头再来。\n<交接>\n")
	for i, v := range h.values() {
		if cleanBody(v) == "" {
			continue
		}
		sb.WriteString("【" + handoffSections[i].name + "】\n" + strings.TrimSpace(v) + "\n")
	}
	sb.WriteString("</交接>")
	return sb.String()
}

// Write writes the handoff to path and returns it with Path set.
func (h Handoff) Write(path string) (Handoff, error) {
	if err := writeDoc(path, h.ToMarkdown()); err != nil {
		return h, err
	}
	h.Path = path
	return h, nil
}
