package main

import "context"
import "encoding/json"
import "fmt"
import "io"
import "path/filepath"
import "strings"

import "github.com/flowerhq/flower/flow"
import "github.com/flowerhq/flower/scripted"

// The demo's scripted documents: what the roles "write".
const (
	demoBrief = "## 目标\n在工作区写一个 hello.txt,并附上一份 1 到 2000 的编号清单 numbers.txt\n" +
		"## 验收标准\n- hello.txt 的内容是用户回答的那句话\n- numbers.txt 有 2000 行\n" +
		"## 边界\n只写这两个文件,不动别的\n## 未知与假设\n假设用 UTF-8;问候语由用户决定"
	demoGoal   = "## 目标\n工作区里有 hello.txt 和 numbers.txt\n## 检查清单\n- hello.txt 存在,内容是用户要的问候语\n- numbers.txt 有 2000 行"
	demoNotYet = "## 结论\n未达成\n## 理由\nnumbers.txt 还没有核对行数,coder 的汇报里没有给出核对结果\n" +
		"## 未通过\n- numbers.txt 有 2000 行"
	demoAchieved = "## 结论\n已达成\n## 理由\n两个文件都在,hello.txt 内容正确,numbers.txt 为 2000 行\n## 未通过\n无"
	// demoAnswer is what the demo "types" when the clarifier asks.
	demoAnswer = "hello, flower"
)

func demoTool(name string, input any) scripted.Reply {
	js, _ := json.Marshal(input)
	return scripted.Reply{ToolUse: &scripted.Block{Name: name, Input: js}}
}

// demoScript is the scripted model behind `flower demo`: a clarifier that
// asks one question, a judge that sets the goal and rejects the first round,
// a coordinator that first tries to write by itself (and is denied), then
// delegates, and a coder whose long command output gets spilled.
func demoScript(ws string) *scripted.Script {
	hello, numbers := filepath.Join(ws, "hello.txt"), filepath.Join(ws, "numbers.txt")
	judged := 0
	return &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "coder", Match: scripted.Match{System: "你是执行者"}, Func: func(r scripted.Request) scripted.Reply {
			n := len(r.AllToolResults())
			switch n {
			case 0:
				return demoTool("Write", map[string]any{"file_path": hello, "content": demoAnswer + "\n"})
			case 1:
				return demoTool("Write", map[string]any{"file_path": numbers, "content": numberList(2000)})
			case 2:
				// 2000 numbered lines are far over the spill threshold.
				return demoTool("Bash", map[string]any{"command": "cat -n numbers.txt", "description": "show the list"})
			}
			return scripted.Reply{Text: "hello.txt 写好了;numbers.txt 已生成,共 2000 行(cat -n 的完整输出被转存到工作台的 spill/ 里)。"}
		}},
		{Name: "clarify", Match: scripted.Match{System: "你是需求澄清者"}, Func: func(r scripted.Request) scripted.Reply {
			if strings.Contains(r.LastUser(), "[tool_result]") {
				return scripted.Reply{Text: demoBrief}
			}
			return demoTool("mcp__flower__ask", map[string]any{"question": "hello.txt 里写什么问候语?", "options": []string{demoAnswer, "hi"}})
		}},
		{Name: "goal", Match: scripted.Match{System: "你是独立评审", FirstUser: "把它变成目标和检查清单"}, Replies: []scripted.Reply{{Text: demoGoal}},
			Func: func(scripted.Request) scripted.Reply { return scripted.Reply{Text: demoGoal} }},
		{Name: "judge", Match: scripted.Match{System: "你是独立评审", FirstUser: "请独立评审"}, Func: func(scripted.Request) scripted.Reply {
			judged++
			if judged == 1 {
				return scripted.Reply{Text: demoNotYet}
			}
			return scripted.Reply{Text: demoAchieved}
		}},
		{Name: "coordinator", Match: scripted.Match{System: "你是协调者"}, Func: func(r scripted.Request) scripted.Reply {
			lu := r.LastUser()
			switch {
			case strings.Contains(lu, "独立评审认为"):
				return demoTool("Agent", map[string]any{"description": "核对 numbers.txt", "subagent_type": "coder", "run_in_background": false,
					"prompt": "目标: 核对 " + numbers + " 的行数。验收: 汇报行数。结果写进工作台 artifacts/,只回路径和结论。"})
			case strings.Contains(lu, "[tool_result][error]"):
				return demoTool("Agent", map[string]any{"description": "写两个文件", "subagent_type": "coder", "run_in_background": false,
					"prompt": "目标: 在 " + ws + " 写 hello.txt(内容: " + demoAnswer + ")和 numbers.txt(1 到 2000)。验收: 两个文件存在,numbers.txt 2000 行。"})
			case strings.Contains(lu, "[tool_result]"):
				return scripted.Reply{Text: "coder 汇报:两个文件都写好了,numbers.txt 为 2000 行。"}
			}
			// The coordinator's first impulse: do it itself. The delegate guard says no.
			return demoTool("Write", map[string]any{"file_path": hello, "content": "done by the coordinator itself\n"})
		}},
	}}
}

// numberList is "1\n2\n…n\n".
func numberList(n int) string {
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&sb, "%d\n", i)
	}
	return sb.String()
}

// demoAnswers answers the clarifier's question, as a person would; with out
// set it shows it there (the human view shows every answer itself).
type demoAnswers struct{ out io.Writer }

func (d demoAnswers) Instant() bool { return true }

func (d demoAnswers) Answer(_ context.Context, q flow.Question) (string, bool, error) {
	if d.out == nil {
		return demoAnswer, true, nil
	}
	fmt.Fprintf(d.out, "\n[flower] the clarifier asks: %s\n  options: %s\n> %s   (typed by the demo)\n", strings.TrimSpace(q.Text), strings.Join(q.Options, " | "), demoAnswer)
	return demoAnswer, true, nil
}
