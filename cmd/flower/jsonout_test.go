package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
)

// checkSchema holds one JSON object to jsonSchema: a kind, every field of
// that kind present, nothing else, times in RFC 3339; nested results too.
func checkSchema(t *testing.T, what, raw string) {
	t.Helper()
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &obj); err != nil {
		t.Errorf("%s: not a JSON object: %.200s", what, raw)
		return
	}
	var kind string
	json.Unmarshal(obj["kind"], &kind)
	if kind == "" {
		t.Errorf("%s: no kind: %.200s", what, raw)
		return
	}
	fields, ok := jsonSchema[kind]
	if !ok {
		fields = jsonSchema["event"]
	}
	var got []string
	for k := range obj {
		got = append(got, k)
	}
	want := slices.Clone(fields)
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s: %s has fields %v, the schema says %v", what, kind, got, want)
	}
	for f := range jsonTimes {
		if v, ok := obj[f]; ok {
			var s string
			if json.Unmarshal(v, &s) != nil || (s != "" && !isRFC3339(s)) {
				t.Errorf("%s: %s.%s = %s is not an RFC 3339 time", what, kind, f, v)
			}
		}
	}
	if steps, ok := obj["steps"]; ok && steps[0] == '[' {
		for _, s := range gjson.ParseBytes(steps).Array() {
			checkSchema(t, what+" steps[]", s.Raw)
		}
	}
}

func isRFC3339(s string) bool {
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

// TestCheckSchemaFails is checkSchema's control: it catches a missing
// field, an extra one, a missing kind and an epoch time.
func TestCheckSchemaFails(t *testing.T) {
	good, _ := json.Marshal(stepResultOut(harness.StepResult{Step: "s", StartedAt: 1.7e9, EndedAt: 1.7e9 + 2}))
	for _, bad := range []string{
		strings.Replace(string(good), `"error":"",`, "", 1),
		strings.Replace(string(good), `{`, `{"extra":1,`, 1),
		strings.Replace(string(good), `"kind":"step_result",`, "", 1),
		strings.Replace(string(good), `"started_at":"`, `"started_at":"1700000000`, 1),
	} {
		inner := &testing.T{}
		checkSchema(inner, "control", bad)
		if !inner.Failed() {
			t.Errorf("checkSchema passed %s", bad)
		}
	}
	checkSchema(t, "the good line", string(good))
}

// TestJSONOfEveryShape: each JSON shape, empty and full, keeps to the
// schema (empty fields present, times RFC 3339).
func TestJSONOfEveryShape(t *testing.T) {
	res := harness.StepResult{Step: "执行-评审#1", SessionID: "s1", OK: true, StartedAt: 1764547200.25, EndedAt: 1764547201.5, Errors: []string{"x"}}
	row := harness.ManifestRow{Run: "r1", Workspace: "/ws", StartedAt: 1764547200, UpdatedAt: 1764547300, Results: []harness.StepResult{res, {}}}
	for name, v := range map[string]any{
		"event":          eventOut(harness.Event{Kind: "text"}),
		"event full":     eventOut(harness.Event{Kind: "guard", Step: "s", Time: time.Now(), Data: map[string]any{"a": 1}, Raw: json.RawMessage(`{"b":2}`)}),
		"step_result":    stepResultOut(harness.StepResult{}),
		"step full":      stepResultOut(res),
		"flow_result":    flowResultOut(flowOutcome{}),
		"flow full":      flowResultOut(flowOutcome{OK: true, Steps: row.Results}),
		"run":            runOut(row),
		"run_detail":     runDetail(),
		"told":           toldJSON{Kind: "told"},
		"version":        versionJSON{Kind: "version"},
		"doctor":         doctorJSON{Kind: "doctor", Checks: []doctorCheck{}},
		"wake_state":     wakeOut(flow.Wake{}),
		"session_report": sessionReportJSON{Kind: "session_report"},
		"transcript":     transcriptJSON{Kind: "transcript", Entries: orEmpty[json.RawMessage](nil)},
	} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		checkSchema(t, name, string(b))
		if strings.Contains(string(b), ":null") && name != "event" {
			t.Errorf("%s has a null: %s", name, b)
		}
	}
	if got := stepResultOut(res).StartedAt; got != "2025-12-01T00:00:00.25Z" {
		t.Errorf("started_at = %q", got)
	}
}

// TestDocsDocumentTheSchema: the JSON section of docs/cli.md lists every
// kind with exactly its fields, so the document cannot drift from the code.
func TestDocsDocumentTheSchema(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	for kind, fields := range jsonSchema {
		var line string
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "| `"+kind+"` |") {
				line = l
			}
		}
		if line == "" {
			t.Errorf("docs/cli.md has no schema row for %s", kind)
			continue
		}
		cells := strings.Split(line, "|")
		var documented []string
		for _, f := range strings.Split(cells[3], ",") {
			documented = append(documented, strings.Trim(strings.TrimSpace(f), "`"))
		}
		if !slices.Equal(documented, fields) {
			t.Errorf("docs/cli.md row for %s lists %v, the schema %v", kind, documented, fields)
		}
	}
}

// TestInProcessJSON: runs, runs show and wake-state --json in process, on
// a run dir written by hand, each one compact line in the schema.
func TestInProcessJSON(t *testing.T) {
	ws := t.TempDir()
	runDir := filepath.Join(ws, ".flower", "runs")
	os.MkdirAll(filepath.Join(runDir, "r1"), 0o700)
	rows := []harness.ManifestRow{{Run: "r1", Workspace: ws, StartedAt: 1764547200, UpdatedAt: 1764547300,
		Results: []harness.StepResult{{Step: flow.ClarifyStepName, OK: true, StartedAt: 1764547200, EndedAt: 1764547210}}}}
	b, _ := json.Marshal(rows)
	os.WriteFile(filepath.Join(runDir, "manifest.json"), b, 0o600)
	ev, _ := json.Marshal(harness.Event{Kind: "guard", Step: "x", Time: time.Now(), Data: map[string]any{"decision": "deny"}})
	os.WriteFile(filepath.Join(runDir, "r1", "events.jsonl"), append(ev, '\n'), 0o600)
	for _, args := range [][]string{{"runs", "--json"}, {"runs", "show", "--json"}, {"runs", "show", "r1", "--json"}, {"wake-state", "--json"}} {
		e, out, errb := testEnv("")
		if code := run(context.Background(), e, append(append([]string{"flower"}, args...), "-C", ws)); code != 0 {
			t.Fatalf("flower %q: exit %d: %s", args, code, errb.String())
		}
		if strings.Count(out.String(), "\n") != 1 {
			t.Errorf("flower %q: not one line: %q", args, out.String())
		}
		v := gjson.Parse(out.String())
		if v.IsArray() {
			if len(v.Array()) != 1 {
				t.Errorf("flower %q: %s", args, out.String())
			}
			v = v.Get("0")
		}
		checkSchema(t, strings.Join(args, " "), v.Raw)
	}
	// The human table: English label with the step's own name beside, plurals.
	e, out, _ := testEnv("")
	run(context.Background(), e, []string{"flower", "runs", "show", "-C", ws})
	for _, want := range []string{"clarify (确认需求)", "1 denial, 0 spills", "0 retries, 0 handoffs"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("runs show lacks %q:\n%s", want, out.String())
		}
	}
}

func displayCol(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x1100 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// TestTerminalProgressSaysItOnce: the status line speaks English labels with
// right plurals, and a failed step's error is printed once (by the step's
// line; the summary names the step, and flower prints nothing after it).
func TestTerminalProgressSaysItOnce(t *testing.T) {
	for _, zh := range []bool{false, true} {
		var buf bytes.Buffer
		p := newProgress(&buf, liveView(0), 0, zh)
		p.event(harness.Event{Kind: "step", Data: map[string]any{"index": 0.0, "total": 3.0}})
		p.event(harness.Event{Kind: "step_start", Step: "执行-评审#1"})
		p.event(harness.Event{Kind: "retry"})
		p.event(harness.Event{Kind: "step_end", Step: "执行-评审#1", Data: map[string]any{"ok": false}})
		p.stepDone(flow.Step{}, harness.StepResult{Step: "执行-评审#1", Error: "harness: BOOM-ERROR"})
		o := flowOutcome{ExitCode: exitFailed, Error: "step 执行-评审#1 failed: BOOM-ERROR", FailedStep: "执行-评审#1"}
		p.finish(o)
		got := buf.String()
		label := "review #1"
		if zh {
			label = "执行-评审#1"
		}
		for _, want := range []string{"[1/3] " + label + " · 0 turns", "1 retry", "failed at step " + label} {
			if !strings.Contains(got, want) {
				t.Errorf("zh=%v: output lacks %q:\n%s", zh, want, got)
			}
		}
		if strings.Count(got, "BOOM-ERROR") != 1 || strings.Contains(got, "harness:") {
			t.Errorf("zh=%v: the error is not printed exactly once, plainly:\n%s", zh, got)
		}
		e, _, errb := testEnv("")
		if code := exitFor(e, o.exitError(false)); code != exitFailed || errb.Len() != 0 {
			t.Errorf("after the summary flower printed %q (exit %d)", errb.String(), code)
		}
		// Control: in a pipeline the summary is JSON, so the error goes to stderr once.
		if code := exitFor(e, o.exitError(true)); code != exitFailed || strings.Count(errb.String(), "BOOM-ERROR") != 1 {
			t.Errorf("pipeline: stderr %q (exit %d)", errb.String(), code)
		}
	}
}

// TestTerminalProgressGauge: the status line's context gauge and turns
// follow the harness's one main-thread rule (events carry the level the
// stream machine decided): a subagent's line, even one whose
// parent_tool_use_id is null, and a synthetic message move neither.
func TestTerminalProgressGauge(t *testing.T) {
	msg := func(id string, data map[string]any, usage int) harness.Event {
		return harness.Event{Kind: harness.EventAssistant, Step: "s", Data: data,
			Raw: json.RawMessage(`{"type":"assistant","parent_tool_use_id":null,"message":{"id":"` + id + `","model":"m","usage":{"input_tokens":` + strconv.Itoa(usage) + `}}}`)}
	}
	var buf bytes.Buffer
	p := newProgress(&buf, liveView(0), 1000, false)
	p.event(harness.Event{Kind: harness.EventStepStart, Step: "s"})
	p.event(msg("m1", map[string]any{"context": 500.0}, 500))
	p.event(msg("m2", map[string]any{"agent_id": "a1"}, 900))
	if line := p.line(); !strings.Contains(line, "ctx 50%") || !strings.Contains(line, "1 turn ") {
		t.Errorf("status line %q, want ctx 50%% and 1 turn", line)
	}
	// Control: the main thread's next level moves the gauge.
	p.event(msg("m3", map[string]any{"context": 800}, 800))
	if line := p.line(); !strings.Contains(line, "ctx 80%") || !strings.Contains(line, "2 turns") {
		t.Errorf("status line %q, want ctx 80%% and 2 turns", line)
	}
}

// liveView is the view at a terminal of width columns (0: no limit).
func liveView(width int) view {
	return view{live: true, width: func() int { return width }}
}

// runDetail is an empty run_detail as runRunsShow builds one.
func runDetail() runDetailJSON {
	d, sp := guardRecords(nil)
	return runDetailJSON{Kind: "run_detail", Tally: harness.RunTally{}, Denials: d, Spills: sp, Steps: stepResultsOut(nil), FlowEvents: flowEvents(nil)}
}
