package flow

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/internal/textclip"
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
	sb.WriteString(digestStats(events))
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
	switch e.Kind {
	case harness.EventStepStart:
		return fmt.Sprintf("%s %s %s", at, e.Kind, e.Step)
	case harness.EventStepEnd:
		end, _ := e.StepEnd()
		return fmt.Sprintf("%s %s %s ok=%v %s", at, e.Kind, e.Step, end.OK, textclip.Mark(end.Error, 120))
	case harness.EventAssistant:
		if m, _ := e.Message(); m.Text != "" {
			return fmt.Sprintf("%s %s 说: %s", at, e.Step, textclip.Mark(strings.Join(strings.Fields(m.Text), " "), 300))
		}
	case harness.EventToolUse:
		m, _ := e.Message()
		return fmt.Sprintf("%s %s 调用工具 %s", at, e.Step, m.Tool)
	case harness.EventGuard:
		if g, _ := e.Guard(); g.Denied() || g.Decision == "rewrite" {
			return fmt.Sprintf("%s %s guard %s %s %s", at, e.Step, g.Guard, g.Decision, g.Tool)
		}
	case harness.EventStep, harness.EventTask, harness.EventGoal, harness.EventVerdict, harness.EventMessage, harness.EventQuestion:
		return fmt.Sprintf("%s %s", at, FlowEventLine(e))
	case harness.EventRetry, harness.EventHandoff, harness.EventInterrupt, harness.EventError, harness.EventOffline:
		return fmt.Sprintf("%s %s %s %v", at, e.Step, e.Kind, e.Data)
	}
	return ""
}

// FlowEventLine describes a workflow event ("step", "task", "goal",
// "verdict", and the channel's "message" and "question") in one line,
// for `flower runs show` and the oracle; "" for any other kind. It reads
// events fresh from Workflow.Run and events read back from events.jsonl.
func FlowEventLine(e harness.Event) string {
	if f, ok := e.FlowStep(); ok {
		line := fmt.Sprintf("step %d/%d %s", f.Index+1, f.Total, e.Step)
		if f.Resumed {
			line += " (continues its earlier session)"
		}
		if f.Woke > 0 {
			line += fmt.Sprintf(" (woke: %d earlier sessions)", f.Woke)
		}
		return line
	}
	if t, ok := e.Task(); ok {
		return fmt.Sprintf("task %s: %d of %d checks cannot be verified in this environment [此环境无法验证] (%s)", e.Step, len(t.Unverifiable), t.Total, t.Path)
	}
	if g, ok := e.Goal(); ok {
		return GoalEventLine(e.Step, g)
	}
	if t, ok := VerdictOf(e); ok {
		passed := 0
		for _, c := range t.Checks {
			if c.Passed {
				passed++
			}
		}
		return fmt.Sprintf("verdict %s: %s (%d of %d checks passed, %d failed)", e.Step, t.Verdict, passed, len(t.Checks), len(t.Failed))
	}
	if c, ok := e.Channel(); ok {
		return ChannelEventLine(e.Kind, e.Step, c)
	}
	return ""
}

// ChannelEventLine describes an exchange with the person in one line: a
// message told or read (by the coordinator's inbox call), or a question
// and its answer.
func ChannelEventLine(kind, step string, c harness.ChannelEvent) string {
	text := textclip.Mark(strings.Join(strings.Fields(c.Text), " "), 120)
	in := ""
	if step != "" {
		in = " in " + step
	}
	switch {
	case kind == harness.EventQuestion:
		return fmt.Sprintf("question%s: %s → [%s] %s", in, text, c.State, textclip.Mark(strings.Join(strings.Fields(c.Answer), " "), 120))
	case c.State == harness.MessageRead:
		return fmt.Sprintf("message read%s: %s", in, text)
	}
	return fmt.Sprintf("message told%s: %s", in, text)
}

// GoalEventLine describes an Event("goal") in one line: the goal frozen, or
// its file changed on disk while the judge keeps the frozen copy.
func GoalEventLine(step string, g harness.GoalEvent) string {
	if g.State == harness.GoalChanged {
		disk := "is gone"
		if g.DiskSHA256 != "" {
			disk = "now holds sha256 " + short(g.DiskSHA256)
		}
		return fmt.Sprintf("goal %s: %s was changed on disk (%s); the judge keeps the frozen goal (sha256 %s)", step, notePath(g.Path), disk, short(g.SHA256))
	}
	return fmt.Sprintf("goal %s: frozen (sha256 %s, %s)", step, short(g.SHA256), notePath(g.Path))
}

// notePath names a workbench file from its workbench on (.flower/notes/目标.md),
// so that a line about it fits a terminal; other paths stay whole.
func notePath(p string) string {
	if i := strings.LastIndex(p, string(filepath.Separator)+".flower"); i >= 0 {
		return p[i+1:]
	}
	return p
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// digestStats is the run's counts for the oracle, from the one fold the
// status line and `flower runs show` use.
func digestStats(events []harness.Event) string {
	st := harness.Fold(events)
	return fmt.Sprintf("统计: %d 个步骤结束(%d 个失败),花费 $%.4f,拒绝 %d,溢出 %d,重试 %d,交接 %d\n",
		st.Steps, st.Failed, st.CostUSD, st.Denials, st.Spills, st.Retries, st.Handoffs)
}
