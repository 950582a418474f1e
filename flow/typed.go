package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/flowerhq/flower/harness"
)

// VerdictSchema is the --json-schema every judge round runs with: the typed
// verdict is flower's decision, the judge's Markdown only its account for
// people. Field names are a public contract: TypedVerdict, the "verdict"
// event and `flower --json`'s flow_result carry the same ones.
const VerdictSchema = `{"type":"object","properties":{` +
	`"verdict":{"type":"string","enum":["achieved","not_yet","unreachable"]},` +
	`"checks":{"type":"array","items":{"type":"object","properties":{` +
	`"check":{"type":"string"},"passed":{"type":"boolean"},"evidence":{"type":"string"}},` +
	`"required":["check","passed","evidence"],"additionalProperties":false}},` +
	`"failed":{"type":"array","items":{"type":"string"}},` +
	`"reason":{"type":"string"}},` +
	`"required":["verdict","checks","failed","reason"],"additionalProperties":false}`

// GoalSchema is the goal step's --json-schema: the goal every round is
// judged against is this typed value, 目标.md its rendering.
const GoalSchema = `{"type":"object","properties":{` +
	`"goal":{"type":"string","minLength":1},` +
	`"checklist":{"type":"array","minItems":1,"items":{"type":"string","minLength":1}}},` +
	`"required":["goal","checklist"],"additionalProperties":false}`

// VerdictCheck is one checklist item as the judge checked it.
type VerdictCheck struct {
	Check    string `json:"check"`
	Passed   bool   `json:"passed"`
	Evidence string `json:"evidence"`
}

// TypedVerdict is a judge round's typed verdict (VerdictSchema).
type TypedVerdict struct {
	Verdict string         `json:"verdict"`
	Checks  []VerdictCheck `json:"checks"`
	Failed  []string       `json:"failed"`
	Reason  string         `json:"reason"`
}

// typedGoal is the goal step's typed goal (GoalSchema).
type typedGoal struct {
	Goal      string   `json:"goal"`
	Checklist []string `json:"checklist"`
}

// Model-facing texts of the typed verdict.
const (
	// noVerdictReason is fed back when the judge gave no typed verdict.
	noVerdictReason = "评审没有给出判定(没有通过 StructuredOutput 提交结构化结论),按未达成处理。请对照检查清单逐条自证,再结束这一轮。"
	// contradictionLead opens the feedback of a verdict that contradicts itself.
	contradictionLead = "评审的判定自相矛盾,按未达成处理:"
)

// decodeStrict decodes raw into v: every field required (present and not
// null), no other field. The CLI validates against the schema already;
// this holds when it did not (a CLI that changed, a value forged elsewhere).
func decodeStrict(raw json.RawMessage, v any, required ...string) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return errors.New("没有结构化的值")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return fmt.Errorf("不是 JSON 对象: %w", err)
	}
	for _, k := range required {
		if f, ok := fields[k]; !ok || string(f) == "null" {
			return fmt.Errorf("缺少字段 %s", k)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("不合格式: %w", err)
	}
	return nil
}

// decodeVerdict reads a typed verdict; an error means no verdict.
func decodeVerdict(raw json.RawMessage) (TypedVerdict, error) {
	var t TypedVerdict
	if err := decodeStrict(raw, &t, "verdict", "checks", "failed", "reason"); err != nil {
		return TypedVerdict{}, err
	}
	switch t.Verdict {
	case Achieved, NotYet, Unreachable:
	default:
		return TypedVerdict{}, fmt.Errorf("verdict %q 不是 achieved、not_yet 或 unreachable", t.Verdict)
	}
	return t, nil
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// decodeGoal reads a typed goal; an error or an empty goal or checklist
// means no goal.
func decodeGoal(raw json.RawMessage) (Goal, error) {
	var t typedGoal
	if err := decodeStrict(raw, &t, "goal", "checklist"); err != nil {
		return Goal{}, err
	}
	g := Goal{Statement: strings.TrimSpace(t.Goal)}
	for _, c := range t.Checklist {
		if c = strings.TrimSpace(c); c != "" {
			g.Checks = append(g.Checks, c)
		}
	}
	if !g.Complete() {
		return Goal{}, errors.New("目标或检查清单是空的")
	}
	return g, nil
}

// sameCheck compares a check with a checklist item, whitespace aside.
func sameCheck(a, b string) bool {
	return strings.Join(strings.Fields(a), " ") == strings.Join(strings.Fields(b), " ")
}

// contradictions lists what makes an "achieved" typed verdict untrue to
// itself or to the frozen checklist: one check per item, in order, each
// passed, and nothing failed.
func (t TypedVerdict) contradictions(checklist []string) []string {
	var out []string
	if len(t.Checks) != len(checklist) {
		out = append(out, fmt.Sprintf("检查清单有 %d 条,判定里有 %d 条检查(要逐条各一项,按顺序)", len(checklist), len(t.Checks)))
	}
	for i, c := range t.Checks {
		switch {
		case i < len(checklist) && !sameCheck(c.Check, checklist[i]):
			out = append(out, fmt.Sprintf("第 %d 条检查「%s」不是检查清单的第 %d 条「%s」", i+1, c.Check, i+1, checklist[i]))
		case !c.Passed:
			out = append(out, fmt.Sprintf("检查「%s」没有通过", c.Check))
		}
	}
	if len(t.Failed) > 0 {
		out = append(out, "未通过列表不是空的: "+strings.Join(t.Failed, "; "))
	}
	return out
}

// Judged is the round's verdict from a judge run: its typed value decides
// (verdictFromTyped), its words (the Markdown) are kept as the Document. A
// run without a typed value gave no verdict: not_yet, said so.
func Judged(r harness.StepResult, checklist []string) Verdict {
	t, err := decodeVerdict(r.Structured)
	if err != nil {
		return Verdict{State: NotYet, Reason: noVerdictReason + " (" + err.Error() + ")", Document: r.Text}
	}
	v := verdictFromTyped(t, checklist)
	v.Document = r.Text
	return v
}

// verdictFromTyped decides a round from a typed verdict against the frozen
// checklist: achieved only when the verdict is achieved, every item has its
// check, in order, passed, and nothing failed; an achieved that contradicts
// itself is not_yet with the contradictions as the reason; unreachable and
// not_yet are what they say.
func verdictFromTyped(t TypedVerdict, checklist []string) Verdict {
	v := Verdict{State: t.Verdict, Reason: strings.TrimSpace(t.Reason), Failed: append([]string(nil), t.Failed...),
		Checks: append([]VerdictCheck(nil), t.Checks...), Typed: &t}
	if t.Verdict != Achieved {
		return v
	}
	if bad := t.contradictions(checklist); len(bad) > 0 {
		v.State = NotYet
		v.Reason = contradictionLead + "\n- " + strings.Join(bad, "\n- ") + "\n" + v.Reason
	}
	return v
}

// Decision is the round as flower decided it, in the typed verdict's shape:
// its verdict the decided state (not_yet for a verdict that contradicts
// itself, or for none), its reason flower's (the contradiction, or "the
// judge gave no verdict", before the judge's own), the checks and failed
// items the judge gave. It is what the run records (Event("verdict")) and
// `flower --json` reports.
func (v Verdict) Decision() TypedVerdict {
	return TypedVerdict{Verdict: v.State, Checks: orEmpty(v.Checks), Failed: orEmpty(v.Failed), Reason: v.Reason}
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// event is the run's record of the round's decision (Event("verdict")).
func (v Verdict) event(step string) harness.Event {
	return eventOf(harness.EventVerdict, step, v.Decision())
}

// VerdictOf decodes an Event("verdict").
func VerdictOf(e harness.Event) (TypedVerdict, bool) {
	if e.Kind != harness.EventVerdict {
		return TypedVerdict{}, false
	}
	var t TypedVerdict
	if json.Unmarshal(mustJSON(e.Data), &t) != nil {
		return TypedVerdict{}, false
	}
	return t, true
}

// RoundState is the verdict a recorded judge round stands for, from its
// typed value alone (a manifest row has no checklist): achieved only when
// the value is achieved with at least one check, every check passed and
// nothing failed; a round without a valid typed value gave no verdict
// (not_yet), whatever its Markdown says.
func RoundState(r harness.StepResult) string {
	t, err := decodeVerdict(r.Structured)
	if err != nil {
		return NotYet
	}
	if t.Verdict == Achieved {
		if len(t.Checks) == 0 || len(t.Failed) > 0 {
			return NotYet
		}
		for _, c := range t.Checks {
			if !c.Passed {
				return NotYet
			}
		}
	}
	return t.Verdict
}
