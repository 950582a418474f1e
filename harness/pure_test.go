package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		err   error
		kind  string
		retry bool
	}{
		{&APIError{Subtype: "success", Status: 529, Text: "API Error: 529 Overloaded. This is a server-side issue", TerminalReason: "api_error"}, KindRetry, true},
		{&APIError{Text: "API Error: 500 Internal server error."}, KindRetry, true},
		{&APIError{Text: "API Error: Connection to the API was lost (ECONNRESET).", TerminalReason: "api_error"}, KindRetry, true},
		{&APIError{Text: "API Error: Request timed out."}, KindRetry, true},
		{&APIError{Status: 429, Text: "rate limited"}, KindRetry, true},
		{&ExitError{Code: -1, Signal: "killed"}, KindRetry, true},
		{&APIError{Subtype: "success", Status: 401, Text: "Invalid API key · Fix external API key", TerminalReason: "api_error"}, KindAuth, false},
		{&APIError{Text: "API Error: 403 forbidden"}, KindAuth, false},
		{&APIError{Status: 400, Text: "bad thing", TerminalReason: "api_error"}, KindBadReq, false},
		{&APIError{Subtype: "error_max_turns", Text: "Reached maximum number of turns (2)", TerminalReason: "max_turns"}, KindLimit, false},
		{&APIError{Subtype: "error_max_budget_usd", Text: "Reached maximum budget ($2)", TerminalReason: "budget_exhausted"}, KindLimit, false},
		{&APIError{Subtype: "success", Status: 400, Text: "Prompt is too long · 210000 tokens > 200000", TerminalReason: "prompt_too_long"}, KindOverflow, false},
		{&StartError{Reason: "claude exited before system/init (exit 3)"}, KindStart, false},
		{errors.New("something odd"), KindUnknown, false},
	}
	for _, tc := range tests {
		kind, retry := Classify(FailureOf(tc.err))
		if kind != tc.kind || retry != tc.retry {
			t.Errorf("Classify(%q) = %s,%v; want %s,%v", tc.err, kind, retry, tc.kind, tc.retry)
		}
	}
}

// TestOutcomes_Typed: each outcome is matched by type, wrapped or not, and
// renders the text StepResult.Error keeps.
func TestOutcomes_Typed(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("attempt 2: %w", err) }
	var api *APIError
	if err := wrap(&APIError{Status: 529, Text: "Overloaded"}); !errors.As(err, &api) || api.Status != 529 || FailureOf(err).Status != 529 || !FailureOf(err).IsError {
		t.Errorf("APIError not matched through a wrap: %v", err)
	}
	var ex *ExitError
	if err := wrap(&ExitError{Code: 3, Stderr: "boom"}); !errors.As(err, &ex) || ex.Code != 3 || FailureOf(err).ExitCode != 3 {
		t.Errorf("ExitError not matched through a wrap: %v", err)
	}
	var st *StartError
	if err := wrap(&StartError{Reason: "r", Stderr: "tail"}); !errors.As(err, &st) || st.Stderr != "tail" || !FailureOf(err).Start {
		t.Errorf("StartError not matched through a wrap: %v", err)
	}
	if !errors.Is(wrap(ErrInterrupted), ErrInterrupted) || ErrInterrupted.Error() != Interrupted || ErrHandoffDue.Error() != HandoffDue {
		t.Error("the sentinels lost their texts")
	}
	if errors.Is(ErrInterrupted, ErrHandoffDue) || errors.As(ErrInterrupted, &api) {
		t.Error("control: distinct outcomes must not match each other")
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&StartError{Reason: "no system/init from claude within 1s"}, "harness: start: no system/init from claude within 1s"},
		{&StartError{Reason: "claude exited before system/init (exit 3)", Stderr: "boom"}, "harness: start: claude exited before system/init (exit 3): boom"},
		{&ExitError{Code: -1, Signal: "killed"}, "claude exited without a result (killed by signal killed)"},
		{&ExitError{Code: 1, Stderr: "x"}, "claude exited without a result (exit 1): x"},
		{&APIError{Subtype: "success", Status: 529, Text: "Overloaded", TerminalReason: "api_error"}, "Overloaded (status 529, api_error)"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

func TestIsOverflow(t *testing.T) {
	for _, s := range []string{"Prompt is too long", "context length exceeded", "This model's maximum context length is", "too many total text bytes", "input length and max_tokens exceed context limit"} {
		if !IsOverflow("x", s) {
			t.Errorf("IsOverflow(%q) = false", s)
		}
	}
	if IsOverflow("API Error: 529", "") {
		t.Error("a 529 is no overflow")
	}
}

// line builds a stream-json line.
func line(v string) []byte { return []byte(v) }

func TestStream_ContextFromMainThreadOnly(t *testing.T) {
	warned := false
	s := &stream{handoff: HandoffPolicy{Enabled: true, Window: 100_000, Headroom: 50_000}, warned: &warned}
	steps := []struct {
		in      string
		ctx     int
		act     action
		near    bool
		comment string
	}{
		{`{"type":"system","subtype":"init","session_id":"S1"}`, 0, actNone, false, "init"},
		{`{"type":"assistant","parent_tool_use_id":null,"message":{"model":"m","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":10,"cache_read_input_tokens":20000,"cache_creation_input_tokens":5}}}`, 20015, actNone, false, "main"},
		{`{"type":"assistant","parent_tool_use_id":"toolu_1","agent_id":"a1","message":{"model":"m","content":[],"usage":{"input_tokens":90000}}}`, 20015, actNone, false, "subagent usage ignored"},
		{`{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"Prompt is too long"}],"usage":{"input_tokens":99999}}}`, 20015, actNone, false, "synthetic ignored"},
		{`{"type":"assistant","parent_tool_use_id":null,"message":{"model":"m","content":[],"usage":{"input_tokens":31000}}}`, 31000, actNone, true, "near"},
		{`{"type":"assistant","parent_tool_use_id":null,"message":{"model":"m","content":[],"usage":{"input_tokens":35000}}}`, 35000, actNone, false, "near only once"},
		{`{"type":"assistant","parent_tool_use_id":null,"message":{"model":"m","content":[],"usage":{"input_tokens":50000}}}`, 50000, actInterrupt, false, "at"},
		{`{"type":"result","subtype":"success","is_error":false,"result":"done","num_turns":2,"total_cost_usd":0.5,"session_id":"S1"}`, 50000, actEndInput, false, "result"},
	}
	for _, st := range steps {
		_, _, act := s.handle(line(st.in), time.Time{})
		near := s.nearCrossed()
		if s.context != st.ctx || act != st.act || near != st.near {
			t.Errorf("%s: context %d act %d near %v; want %d %d %v", st.comment, s.context, act, near, st.ctx, st.act, st.near)
		}
	}
	if s.sessionID != "S1" || !s.due || s.results != 1 {
		t.Errorf("state: %+v", s)
	}
}

func TestResultError(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"is_error":false,"result":"ok"}`, ""},
		{`{"is_error":true,"subtype":"error_max_turns","terminal_reason":"max_turns","errors":["Reached maximum number of turns (2)"]}`, "Reached maximum number of turns (2) (error_max_turns, max_turns)"},
		{`{"is_error":true,"subtype":"success","terminal_reason":"api_error","api_error_status":529,"result":"API Error: 529 Overloaded"}`, "API Error: 529 Overloaded (api_error)"},
		{`{"is_error":true,"subtype":"success","terminal_reason":"api_error","api_error_status":401,"result":"Invalid API key"}`, "Invalid API key (status 401, api_error)"},
	}
	for _, tc := range tests {
		if got := resultError(gjson.Parse(tc.in)); got != tc.want {
			t.Errorf("resultError(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestHandoff_ParseWriteArchive(t *testing.T) {
	text := "Sure.\n**在做什么**: counting\nmore\n## 已定结论\nA\n## 走不通的路\n(未填)\n3. 下一步\nfinish\n## 现场\nfiles\n## 下一步\nIGNORED second"
	h := ParseHandoff(text, "s/1")
	if h.Doing != "counting\nmore" || h.Decided != "A" || h.Deadends != "" || h.Next != "finish" || h.Scene != "files" || !h.Complete() {
		t.Fatalf("parsed %+v", h)
	}
	if m := ParseHandoff("## 现场\nx", "s").Missing(); strings.Join(m, ",") != "在做什么,下一步" {
		t.Errorf("missing = %v", m)
	}
	d := DegradedHandoff("s", strings.Repeat("任", 2000), "why")
	if !d.Degraded || len([]rune(d.Scene)) != 1200 || !d.Complete() {
		t.Errorf("degraded = %+v", d)
	}
	notes := t.TempDir()
	for i := 0; i < 2; i++ {
		if err := h.Write(notes); err != nil {
			t.Fatal(err)
		}
	}
	if filepath.Base(h.Path) != "交接-s_1.md" || len(ArchivedHandoffs(notes)) != 1 {
		t.Errorf("path %s, archived %v", h.Path, ArchivedHandoffs(notes))
	}
	data, _ := os.ReadFile(h.Path)
	back := ParseHandoff(string(data), "s/1")
	back.Path = h.Path
	if back != h {
		t.Errorf("round trip:\n%+v\n%+v", back, h)
	}
	if l, err := LoadHandoff(h.Path); err != nil || l != h {
		t.Errorf("LoadHandoff = %+v, %v; want %+v", l, err, h)
	}
	if pb := d.PromptBlock(); !strings.Contains(pb, DegradedNote) || strings.Contains(pb, HandoffDeadends) {
		t.Errorf("degraded prompt block lacks the note or shows an empty section:\n%s", pb)
	}
	if pb := h.PromptBlock(); !strings.Contains(pb, "【下一步】\nfinish") || !strings.HasPrefix(pb, PromptBlockIntro) || !strings.Contains(pb, "步骤: s/1") || !strings.Contains(pb, h.Path) {
		t.Errorf("prompt block:\n%s", pb)
	}
}

func TestWorkbench(t *testing.T) {
	ws := t.TempDir()
	wb := NewWorkbench(ws)
	if err := wb.ensure(); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"scripts/a.sh":    "#!/bin/sh\n# desc: counts widgets\necho\n",
		"scripts/b.py":    "\"\"\"Summarise the log.\"\"\"\nprint()\n",
		"scripts/c.sql":   "-- desc: monthly totals\nselect 1;\n",
		"scripts/d.go":    "// plain comment first\npackage main\n",
		"artifacts/r.txt": "result\n",
	}
	for p, c := range files {
		os.WriteFile(filepath.Join(wb.Root(), p), []byte(c), 0o644)
	}
	if err := wb.Refresh(); err != nil {
		t.Fatal(err)
	}
	idx, _ := os.ReadFile(wb.indexPath())
	for _, want := range []string{"scripts/a.sh — counts widgets", "scripts/b.py — Summarise the log.", "scripts/c.sql — monthly totals", "scripts/d.go — plain comment first", "- artifacts/r.txt (7 B)"} {
		if !strings.Contains(string(idx), want) {
			t.Errorf("INDEX.md lacks %q:\n%s", want, idx)
		}
	}
	pb := wb.PromptBlock()
	if !strings.Contains(pb, "scripts/") || !strings.Contains(pb, "artifacts/") || !strings.Contains(pb, "notes/") || strings.Contains(pb, fmt.Sprintf(externalNote, wb.Root())) {
		t.Errorf("prompt block:\n%s", pb)
	}
	ext := &Workbench{Workspace: ws, Home: filepath.Join(t.TempDir(), "wb")}
	if !ext.External() || !strings.Contains(ext.PromptBlock(), fmt.Sprintf(externalNote, ext.Root())) {
		t.Errorf("external workbench lacks the absolute-path sentence:\n%s", ext.PromptBlock())
	}
	wb.MaxIndexEntries = 2
	if idx := wb.Index(); strings.Count(idx, "\n- scripts/") != 2 || !strings.Contains(idx, "\n- …") {
		t.Errorf("index not capped:\n%s", idx)
	}
}

func TestManifest_ConcurrentWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "manifest.json")
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 3 {
				row := ManifestRow{Run: fmt.Sprintf("run-%d", i), Results: make([]StepResult, j+1)}
				if err := WriteManifestRow(path, row); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	rows, err := ReadManifest(path)
	if err != nil || len(rows) != 16 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	for _, r := range rows {
		if len(r.Results) != 3 {
			t.Errorf("row %s has %d results, want its last write (3)", r.Run, len(r.Results))
		}
	}
}

func TestReportServer(t *testing.T) {
	got := make(chan Event, 4)
	s, err := startReportServer(func(l []byte) { got <- reportEvent(l) })
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(s.Path())
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v, %v", st.Mode(), err)
	}
	c, err := net.Dial("unix", s.Path())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(c, `{"v":1,"kind":"guard","guard":"delegate","decision":"deny","tool":"Bash","session_id":"S"}`)
	select {
	case ev := <-got:
		if ev.Kind != "guard" || ev.Data["decision"] != "deny" || !json.Valid(ev.Raw) {
			t.Errorf("event = %+v", ev)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("no report")
	}
	c.Close()
	s.Close()
	s.Close()
	if _, err := os.Stat(filepath.Dir(s.Path())); !os.IsNotExist(err) {
		t.Errorf("socket dir left behind: %v", err)
	}
}

func TestCheckCredentials(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	home := t.TempDir()
	tests := []struct {
		name string
		get  func(string) string
		ok   bool
	}{
		{"api key", env("ANTHROPIC_API_KEY", "k", "HOME", home), true},
		{"auth token", env("ANTHROPIC_AUTH_TOKEN", "k", "HOME", home), true},
		{"oauth token", env("CLAUDE_CODE_OAUTH_TOKEN", "k", "HOME", home), true},
		{"vertex", env("CLAUDE_CODE_USE_VERTEX", "1", "HOME", home), true},
		{"bedrock off", env("CLAUDE_CODE_USE_BEDROCK", "0", "HOME", home), false},
		{"blank key", env("ANTHROPIC_API_KEY", "  ", "HOME", home), false},
		{"nothing", env("HOME", home), false},
	}
	for _, tc := range tests {
		if err := CheckCredentials(tc.get); (err == nil) != tc.ok {
			t.Errorf("%s: err = %v", tc.name, err)
		}
	}
}

// TestStream_Recorded feeds streams recorded from claude 2.1.328 (against
// the scripted model) through the state machine.
func TestStream_Recorded(t *testing.T) {
	tests := []struct {
		file    string
		context int
		text    string
		err     string
		kinds   []string
	}{
		{"tool-then-text.jsonl", 1300 + 3400, "RECORDED_DONE", "", []string{"init", "tool_use", "tool_result", "assistant", "result"}},
		{"api-529.jsonl", 0, "", "API Error: 529 Overloaded", []string{"init", "assistant", "result"}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "streams", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			s := &stream{}
			var kinds []string
			for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				ev, emit, _ := s.handle([]byte(l), time.Time{})
				if emit {
					kinds = append(kinds, ev.Kind)
				}
			}
			if s.sessionID == "" || s.context != tc.context || s.results != 1 {
				t.Errorf("session %q context %d results %d", s.sessionID, s.context, s.results)
			}
			if got := s.final.Get("result").String(); tc.text != "" && got != tc.text {
				t.Errorf("text = %q", got)
			}
			if got := resultError(s.final); !strings.HasPrefix(got, tc.err) || (tc.err == "") != (got == "") {
				t.Errorf("error = %q, want prefix %q", got, tc.err)
			}
			if k, retry := Classify(FailureOf(resultFailure(s.final))); tc.err != "" && (k != KindRetry || !retry) {
				t.Errorf("classify = %s %v", k, retry)
			}
			if strings.Join(kinds, ",") != strings.Join(tc.kinds, ",") {
				t.Errorf("events = %v, want %v", kinds, tc.kinds)
			}
		})
	}
}
