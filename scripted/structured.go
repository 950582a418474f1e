package scripted

import (
	"encoding/json"
	"strings"
)

// StructuredTool is the tool claude adds for --json-schema; a reply's
// Structured answers with a call of it.
const StructuredTool = "StructuredOutput"

// Check is one checklist item of a typed verdict.
type Check struct {
	Check    string `json:"check"`
	Passed   bool   `json:"passed"`
	Evidence string `json:"evidence"`
}

// typedVerdict is flower's typed verdict (flow.VerdictSchema).
type typedVerdict struct {
	Verdict string   `json:"verdict"`
	Checks  []Check  `json:"checks"`
	Failed  []string `json:"failed"`
	Reason  string   `json:"reason"`
}

// VerdictReply is a judge's reply: its Markdown md as text, then the typed
// verdict {verdict, checks, failed, reason} through StructuredOutput.
func VerdictReply(md, verdict string, checks []Check, failed []string, reason string) Reply {
	if checks == nil {
		checks = []Check{}
	}
	if failed == nil {
		failed = []string{}
	}
	js, _ := json.Marshal(typedVerdict{Verdict: verdict, Checks: checks, Failed: failed, Reason: reason})
	return Reply{Text: md, Structured: js}
}

// Achieved is a judge's reply to r that passes every item of the checklist
// r's prompt gives (Checklist), in order: md as text, "achieved" typed.
func Achieved(r Request, md string) Reply {
	var checks []Check
	for _, c := range Checklist(r) {
		checks = append(checks, Check{Check: c, Passed: true, Evidence: "checked by the scripted judge"})
	}
	return VerdictReply(md, "achieved", checks, nil, "every check passed")
}

// GoalReply is a goal step's reply: its Markdown md as text, then the
// typed goal {goal, checklist} through StructuredOutput.
func GoalReply(md, goal string, checklist ...string) Reply {
	js, _ := json.Marshal(map[string]any{"goal": goal, "checklist": checklist})
	return Reply{Text: md, Structured: js}
}

// Checklist is the numbered checklist in flower's judge prompt (the first
// user message's <检查清单> block: "1. item" a line), nil when there is none.
func Checklist(r Request) []string { return ChecklistOf(r.FirstUser()) }

// ChecklistOf is Checklist of a prompt's text.
func ChecklistOf(prompt string) []string {
	_, rest, ok := strings.Cut(prompt, "<检查清单>")
	if !ok {
		return nil
	}
	block, _, _ := strings.Cut(rest, "</检查清单>")
	var out []string
	for _, l := range strings.Split(block, "\n") {
		l = strings.TrimSpace(l)
		i := strings.Index(l, ". ")
		if i <= 0 || strings.Trim(l[:i], "0123456789") != "" {
			continue
		}
		out = append(out, l[i+2:])
	}
	return out
}
