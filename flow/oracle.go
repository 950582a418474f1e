package flow

import (
	"fmt"
	"strings"

	"github.com/flowerhq/flower/harness"
)

// askDigestEvents is how many notable events AskPrompt quotes.
const askDigestEvents = 40

// AskPrompt is the prompt for the oracle (Oracle role) answering a question
// about a run: the question, a digest of the run's latest notable events,
// and where to read more. Only what the oracle may read is named; it writes
// nothing, so asking never changes the run.
func AskPrompt(question, eventsPath string, events []harness.Event, wb *harness.Workbench) string {
	var sb strings.Builder
	sb.WriteString("问题: " + strings.TrimSpace(question) + "\n\n")
	sb.WriteString("最近的事件(最新的在最后,完整记录在 " + eventsPath + "):\n")
	var notable []string
	for _, e := range events {
		if line := digestLine(e); line != "" {
			notable = append(notable, line)
		}
	}
	if len(notable) > askDigestEvents {
		notable = notable[len(notable)-askDigestEvents:]
	}
	if len(notable) == 0 {
		sb.WriteString("(没有记录)\n")
	}
	for _, l := range notable {
		sb.WriteString("- " + l + "\n")
	}
	if wb != nil {
		sb.WriteString("\n工作台在 " + wb.Root() + ":笔记在 " + wb.Notes() + ",产物在 " + wb.Artifacts() + ",索引是 INDEX.md。\n")
	}
	sb.WriteString("\n只读地查看需要的文件,然后简短回答,说明依据来自哪个文件。")
	return sb.String()
}

// digestLine is one event as a line for the oracle, or "" when the event is
// noise (stream chatter, mirror frames).
func digestLine(e harness.Event) string {
	at := e.Time.Format("15:04:05")
	str := func(k string) string { s, _ := e.Data[k].(string); return s }
	switch e.Kind {
	case "step_start", "step_end":
		ok := ""
		if e.Kind == "step_end" {
			ok = fmt.Sprintf(" ok=%v %s", e.Data["ok"], clip(str("error"), 120))
		}
		return fmt.Sprintf("%s %s %s%s", at, e.Kind, e.Step, ok)
	case "assistant":
		if t := str("text"); t != "" {
			return fmt.Sprintf("%s %s 说: %s", at, e.Step, clip(strings.Join(strings.Fields(t), " "), 300))
		}
	case "tool_use":
		return fmt.Sprintf("%s %s 调用工具 %s", at, e.Step, str("tool"))
	case "guard":
		if d := str("decision"); d == "deny" || d == "rewrite" {
			return fmt.Sprintf("%s %s guard %s %s %s", at, e.Step, str("guard"), d, str("tool"))
		}
	case "step", "task":
		return fmt.Sprintf("%s %s", at, FlowEventLine(e))
	case "retry", "handoff", "interrupt", "error":
		return fmt.Sprintf("%s %s %s %v", at, e.Step, e.Kind, e.Data)
	}
	return ""
}

// FlowEventLine describes a workflow event ("step" or "task") in one line,
// for `flower runs show` and the oracle; "" for any other kind. It reads
// events fresh from Workflow.Run and events read back from events.jsonl.
func FlowEventLine(e harness.Event) string {
	num := func(k string) int {
		switch v := e.Data[k].(type) {
		case int:
			return v
		case float64:
			return int(v)
		}
		return 0
	}
	switch e.Kind {
	case "step":
		line := fmt.Sprintf("step %d/%d %s", num("index")+1, num("total"), e.Step)
		if r, _ := e.Data["resumed"].(bool); r {
			line += " (continues its earlier session)"
		}
		if w := num("woke"); w > 0 {
			line += fmt.Sprintf(" (woke: %d earlier sessions)", w)
		}
		return line
	case "task":
		n := 0
		switch u := e.Data["unverifiable"].(type) {
		case []string:
			n = len(u)
		case []any:
			n = len(u)
		}
		path, _ := e.Data["path"].(string)
		return fmt.Sprintf("task %s: %d of %d checks cannot be verified in this environment [此环境无法验证] (%s)", e.Step, n, num("total"), path)
	}
	return ""
}
