package sessionstore_test

// End-to-end tests on the real, pinned claude against the scripted model: a
// step runs with --session-mirror, its transcript_mirror frames go into the
// store, the store materializes the session into a fresh config dir, and
// claude --resume replays it; the assertions read the request the resumed
// call sent to the model.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/sessionstore"
	"github.com/flowerhq/flower/testkit/testbed"
)

const projectKey = "flowerproj"

func bash(id, cmd string) scripted.Reply {
	in, _ := json.Marshal(map[string]string{"command": cmd, "description": "run " + cmd})
	return scripted.Reply{ToolUse: &scripted.Block{ID: id, Name: "Bash", Input: in}}
}

// stepRun is one claude run whose mirror frames were fed to a store.
type stepRun struct {
	lines     []gjson.Result
	result    gjson.Result
	sessionID string
	exitCode  int
	stderr    string
	frames    int
}

// runStep runs `claude -p --session-mirror … -- prompt` with its config dir
// at cfg and the project folder name fixed, feeding every transcript_mirror
// line to st.Mirror as it arrives. onLine, if set, sees each stdout line and
// may kill the process.
func runStep(t *testing.T, bed *testbed.Bed, st *sessionstore.Store, cfg string, onLine func(l gjson.Result, pid int), args ...string) *stepRun {
	t.Helper()
	ctx := testbed.Context(t)
	full := append([]string{"-p", "--output-format", "stream-json", "--verbose", "--session-mirror", "--allowedTools", "Bash"}, args...)
	cmd := bed.Command(ctx, full...)
	cmd.Env = append(bed.Env(), "CLAUDE_CONFIG_DIR="+cfg, "CLAUDE_CODE_PROJECT_DIR_NAME="+projectKey)
	out, stderr := testbed.Start(t, cmd)
	run := &stepRun{}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		raw := append([]byte(nil), sc.Bytes()...)
		if !gjson.ValidBytes(raw) {
			continue
		}
		l := gjson.ParseBytes(raw)
		run.lines = append(run.lines, l)
		switch l.Get("type").String() {
		case "transcript_mirror":
			run.frames++
			if err := st.Mirror(ctx, raw); err != nil {
				t.Errorf("Mirror: %v", err)
			}
		case "result":
			run.result = l
		case "system":
			if id := l.Get("session_id").String(); id != "" && run.sessionID == "" {
				run.sessionID = id
			}
		}
		if onLine != nil {
			onLine(l, cmd.Process.Pid)
		}
	}
	err := cmd.Wait()
	if ee, ok := err.(interface{ ExitCode() int }); ok && err != nil {
		run.exitCode = ee.ExitCode()
	}
	run.stderr = stderr.String()
	if run.frames == 0 {
		t.Fatalf("claude printed no transcript_mirror frame (exit %d)\nstderr: %s", run.exitCode, run.stderr)
	}
	return run
}

// resume materializes the session into a fresh config dir and resumes it.
func resume(t *testing.T, bed *testbed.Bed, st *sessionstore.Store, id, prompt string) (*stepRun, sessionstore.TrimReport) {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "resume-cfg")
	rep, err := st.MaterializeKey(t.Context(), sessionstore.Key{ProjectKey: projectKey, SessionID: id}, cfg)
	if err != nil {
		t.Fatalf("Materialize: %v", err)
	}
	run := runStep(t, bed, st, cfg, nil, "--resume="+id, "--", prompt)
	if run.result.Get("is_error").Bool() || run.exitCode != 0 {
		t.Fatalf("resumed run failed: exit %d, result %s\nstderr: %s", run.exitCode, run.result.Raw, run.stderr)
	}
	return run, rep
}

func lastRequest(t *testing.T, bed *testbed.Bed, conversation string) scripted.Request {
	t.Helper()
	reqs := bed.Model.RequestsFor(conversation)
	if len(reqs) == 0 {
		t.Fatalf("no request reached conversation %q (unmatched: %d)", conversation, len(bed.Model.Unmatched()))
	}
	return reqs[len(reqs)-1]
}

func resultsByID(r scripted.Request) map[string]scripted.ToolResult {
	out := map[string]scripted.ToolResult{}
	for _, tr := range r.AllToolResults() {
		out[tr.ToolUseID] = tr
	}
	return out
}

// TestE2E_ResumeExpiresTrimsAndKeepsRawRows: a step whose Bash results total
// over 200 kB is resumed; the resumed request carries spill pointers for the
// old large results, the last keep_recent turns whole, and the policy text in
// place of the old `git status` / `ls` results — while the rows in SQLite
// stay byte-identical to the lines the CLI wrote to its own transcript.
func TestE2E_ResumeExpiresTrimsAndKeepsRawRows(t *testing.T) {
	t.Parallel()
	const big = 10
	replies := []scripted.Reply{bash("toolu_gitstatus", "git status"), bash("toolu_ls", "ls")}
	for i := range big {
		replies = append(replies, bash(fmt.Sprintf("toolu_big%02d", i), fmt.Sprintf("seq %d %d", 1000000*(i+1), 1000000*(i+1)+2800)))
	}
	replies = append(replies, scripted.Reply{Text: "all work done"})
	bed := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "work", Match: scripted.Match{FirstUser: "BIGWORK"}, Replies: replies},
		{Name: "resume", Match: scripted.Match{FirstUser: "BIGWORK"}, Replies: []scripted.Reply{{Text: "resumed fine"}}},
	}})
	trim := sessionstore.DefaultTrimPolicy()
	trim.KeepRecent = 4
	st := openTemp(t, sessionstore.WithWorkspace(bed.Workspace), sessionstore.WithTrim(trim))
	cfg := filepath.Join(t.TempDir(), "cfg")

	first := runStep(t, bed, st, cfg, nil, "--", "BIGWORK: run the tools")
	if first.result.Get("result").String() != "all work done" {
		t.Fatalf("first run: %s\nstderr: %s", first.result.Raw, first.stderr)
	}
	original := resultsByID(lastRequest(t, bed, "work"))
	total := 0
	for i := range big {
		total += len(original[fmt.Sprintf("toolu_big%02d", i)].Content)
	}
	if total < 200_000 {
		t.Fatalf("the Bash results total %d bytes, want ≥ 200 kB", total)
	}

	// Raw rows are byte-identical to what the CLI wrote.
	key := sessionstore.Key{ProjectKey: projectKey, SessionID: first.sessionID}
	rows, err := st.Load(t.Context(), key)
	if err != nil || len(rows) == 0 {
		t.Fatalf("Load: %d rows, %v", len(rows), err)
	}
	assertRowsAreFileLines(t, rows, filepath.Join(cfg, "projects", projectKey, first.sessionID+".jsonl"))

	_, rep := resume(t, bed, st, first.sessionID, "NEXT: carry on")
	got := resultsByID(lastRequest(t, bed, "resume"))
	t.Logf("trim report: %+v", rep)

	// Expired: git status and ls (turns 0 and 1 of 13: 12 and 11 turns ago).
	for id, want := range map[string]string{
		"toolu_gitstatus": "[git status 的结果已过期(第 12 轮前),当前状态可能已变。需要请重新执行]",
		"toolu_ls":        "[ls 的结果已过期(第 11 轮前),当前状态可能已变。需要请重新执行]",
	} {
		if got[id].Content != want {
			t.Errorf("resumed %s = %q, want %q", id, got[id].Content, want)
		}
	}
	// Trimmed: the big results of turns 2..8 (ages 10..4); whole: turns 9..11.
	for i := range big {
		id := fmt.Sprintf("toolu_big%02d", i)
		orig, now := original[id].Content, got[id].Content
		if i < big-3 {
			file, text := spilled(t, now)
			if text != strings.TrimSuffix(orig, "\n") {
				t.Errorf("%s: the lines the pointer names in %s are not the original (%d vs %d bytes)", id, file, len(text), len(orig))
			}
			if !strings.HasPrefix(file, filepath.Join(bed.Workspace, ".flower", "spill")) {
				t.Errorf("%s: spill file %s is not under <workspace>/.flower/spill", id, file)
			}
			continue
		}
		if now != orig {
			t.Errorf("%s is in the last keep_recent turns but changed: %d → %d bytes", id, len(orig), len(now))
		}
	}
	if rep.Expired != 2 || rep.Trimmed != big-3 || rep.Repaired != 0 {
		t.Errorf("report = %+v, want 2 expired, %d trimmed, 0 repaired", rep, big-3)
	}
	// Still byte-identical after the resume appended to the same key.
	rows, _ = st.Load(t.Context(), key)
	for _, r := range rows {
		if strings.Contains(string(r), trimPointerLead()) || strings.Contains(string(r), "的结果已过期") {
			t.Fatalf("a raw row was changed by the pipeline: %.200s", r)
		}
	}
}

// spillPointer extracts the spill file path from a trimmed result.
func spillPointer(t *testing.T, content string) string {
	t.Helper()
	file, _ := spilled(t, content)
	return file
}

// trimPointerLead is how every trim pointer starts.
func trimPointerLead() string {
	return sessionstore.TrimPointerFormat[:strings.IndexByte(sessionstore.TrimPointerFormat, '%')]
}

// spilled reads back the text a trim pointer points at: lines A-B of the
// spill file it names.
func spilled(t *testing.T, content string) (file, text string) {
	t.Helper()
	if !strings.HasPrefix(content, trimPointerLead()) {
		t.Fatalf("result is not a spill pointer: %.120q", content)
	}
	file, from, to := readTrimPointer(t, content)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("spill file: %v", err)
	}
	lines := strings.Split(string(data), "\n")
	if from < 1 || to > len(lines) || from > to+1 {
		t.Fatalf("pointer lines %d-%d outside %s (%d lines)", from, to, file, len(lines))
	}
	return file, strings.Join(lines[from-1:to], "\n")
}

// assertRowsAreFileLines checks that every stored row is, byte for byte, a
// line of the CLI's own transcript file, in the same order.
func assertRowsAreFileLines(t *testing.T, rows []json.RawMessage, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	j := 0
	for i, r := range rows {
		for j < len(lines) && lines[j] != string(r) {
			j++
		}
		if j == len(lines) {
			t.Fatalf("row %d (%.120s) is not a line of %s (in order)", i, r, file)
		}
		j++
	}
}

// TestE2E_KilledMidToolCallResumesWithoutError: claude is killed (SIGKILL)
// while a Bash call runs; the transcript ends in a tool_use without a result.
// The resumed call succeeds, and its request carries the repaired result.
func TestE2E_KilledMidToolCallResumesWithoutError(t *testing.T) {
	t.Parallel()
	bed := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "work", Match: scripted.Match{FirstUser: "SLOWWORK"}, Replies: []scripted.Reply{
			bash("toolu_before", "echo before"), bash("toolu_slow", "echo waiting && sleep 30 && echo woke")}},
		{Name: "resume", Match: scripted.Match{FirstUser: "SLOWWORK"}, Replies: []scripted.Reply{{Text: "resumed after crash"}}},
	}})
	st := openTemp(t, sessionstore.WithWorkspace(bed.Workspace))
	cfg := filepath.Join(t.TempDir(), "cfg")
	killed := false
	first := runStep(t, bed, st, cfg, func(l gjson.Result, pid int) {
		if killed || l.Get("type").String() != "transcript_mirror" || !strings.Contains(l.Raw, `"toolu_slow"`) {
			return
		}
		killed = true
		// Kill once the tool runs: its `sleep 30` has started below claude.
		testbed.Await(t, "the slow tool's sleep", func() bool {
			return slices.Contains(slices.Collect(maps.Values(testbed.Descendants(pid))), "sleep")
		})
		syscall.Kill(-pid, syscall.SIGKILL)
	}, "--", "SLOWWORK: start the slow tool")
	if !killed || first.result.Exists() {
		t.Fatalf("the run was not killed mid-tool-call (killed=%v, result=%s)", killed, first.result.Raw)
	}
	_, rep := resume(t, bed, st, first.sessionID, "NEXT: what happened?")
	if rep.Repaired != 1 {
		t.Errorf("report = %+v, want 1 repaired", rep)
	}
	got := resultsByID(lastRequest(t, bed, "resume"))
	if r := got["toolu_slow"]; r.Content != sessionstore.RepairText || !r.IsError {
		t.Errorf("resumed request: toolu_slow result = %+v, want the repair text as an error", r)
	}
	if r := got["toolu_before"]; r.Content != "before" {
		t.Errorf("resumed request: toolu_before result = %+v, want %q", r, "before")
	}
}

// TestE2E_MovedRunDirResumes: the run dir (store and config dir) is moved to
// a new path between the step and the resume.
func TestE2E_MovedRunDirResumes(t *testing.T) {
	t.Parallel()
	bed := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "work", Match: scripted.Match{FirstUser: "PORTABLE"}, Replies: []scripted.Reply{
			bash("toolu_echo", "echo remembered-value-42"), {Text: "noted"}}},
		{Name: "resume", Match: scripted.Match{FirstUser: "PORTABLE"}, Replies: []scripted.Reply{{Text: "still here"}}},
	}})
	base := t.TempDir()
	runA, runB := filepath.Join(base, "a", "runs"), filepath.Join(base, "elsewhere", "moved-runs")
	if err := os.MkdirAll(runA, 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := sessionstore.Open(filepath.Join(runA, "sessions.db"), sessionstore.WithWorkspace(bed.Workspace))
	if err != nil {
		t.Fatal(err)
	}
	first := runStep(t, bed, st, filepath.Join(runA, "cfg"), nil, "--", "PORTABLE: remember this")
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(runB), 0o755)
	if err := os.Rename(runA, runB); err != nil {
		t.Fatal(err)
	}
	moved, err := sessionstore.Open(filepath.Join(runB, "sessions.db"), sessionstore.WithWorkspace(bed.Workspace))
	if err != nil {
		t.Fatal(err)
	}
	defer moved.Close()
	key, err := moved.Find(t.Context(), first.sessionID)
	if err != nil {
		t.Fatal(err)
	}
	run, _ := resume(t, bed, moved, key.SessionID, "NEXT: what was it?")
	if run.result.Get("result").String() != "still here" {
		t.Fatalf("resumed result = %s", run.result.Raw)
	}
	req := lastRequest(t, bed, "resume")
	if r := resultsByID(req)["toolu_echo"]; r.Content != "remembered-value-42" {
		t.Errorf("the resumed request lost the history: toolu_echo = %+v", r)
	}
	if !strings.Contains(req.Text(), "NEXT: what was it?") || !strings.Contains(req.Text(), "noted") {
		t.Errorf("resumed request lacks the old answer or the new prompt")
	}
}

// TestE2E_PrunedDenialsResume: three Write calls are denied (no permission
// under -p); on resume only the last denial is sent, the earlier tool_use /
// tool_result pairs are gone, and the relinked transcript replays without
// an API error.
func TestE2E_PrunedDenialsResume(t *testing.T) {
	t.Parallel()
	write := func(id, path string) scripted.Reply {
		in, _ := json.Marshal(map[string]string{"file_path": path, "content": "x"})
		return scripted.Reply{ToolUse: &scripted.Block{ID: id, Name: "Write", Input: in}}
	}
	bed := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "work", Match: scripted.Match{FirstUser: "DENIED"}, Replies: []scripted.Reply{
			write("toolu_w1", "/etc/flower-denied-1"), bash("toolu_ok", "echo between"),
			write("toolu_w2", "/etc/flower-denied-2"), write("toolu_w3", "/etc/flower-denied-3"), {Text: "gave up"}}},
		{Name: "resume", Match: scripted.Match{FirstUser: "DENIED"}, Replies: []scripted.Reply{{Text: "ok then"}}},
	}})
	st := openTemp(t, sessionstore.WithWorkspace(bed.Workspace))
	first := runStep(t, bed, st, filepath.Join(t.TempDir(), "cfg"), nil, "--", "DENIED: write the files")
	if n := len(first.result.Get("permission_denials").Array()); n != 3 {
		t.Fatalf("want 3 permission denials in the first run, got %d: %s", n, first.result.Raw)
	}
	_, rep := resume(t, bed, st, first.sessionID, "NEXT: and now?")
	if rep.Pruned != 2 || rep.PrunedLines != 4 {
		t.Errorf("report = %+v, want 2 denials pruned (4 lines)", rep)
	}
	req := lastRequest(t, bed, "resume")
	got := resultsByID(req)
	for _, id := range []string{"toolu_w1", "toolu_w2"} {
		if _, ok := got[id]; ok || strings.Contains(req.Messages().Raw, id) {
			t.Errorf("pruned denial %s is still in the resumed request", id)
		}
	}
	if r := got["toolu_w3"]; !r.IsError || !strings.Contains(r.Content, "haven't granted") {
		t.Errorf("the last denial should stay: %+v", r)
	}
	if got["toolu_ok"].Content != "between" {
		t.Errorf("the call between the denials was lost: %+v", got["toolu_ok"])
	}
}

// TestE2E_SubagentTranscriptsMirrorAndMaterialize: a step that runs a
// subagent; its transcript arrives through the mirror under its own subkey,
// byte-identical to the CLI's file, and Materialize writes it back beside
// the main transcript (with its .meta.json when the CLI mirrored one).
func TestE2E_SubagentTranscriptsMirrorAndMaterialize(t *testing.T) {
	t.Parallel()
	agent, _ := json.Marshal(map[string]any{"description": "sub work", "prompt": "SUBTASK: echo from the subagent",
		"subagent_type": "general-purpose", "run_in_background": false})
	bed := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "sub", Match: scripted.Match{FirstUser: "SUBTASK"}, Replies: []scripted.Reply{
			bash("toolu_sub", "echo from-sub"), {Text: "sub done"}}},
		{Name: "work", Match: scripted.Match{FirstUser: "MAINTASK"}, Replies: []scripted.Reply{
			{ToolUse: &scripted.Block{ID: "toolu_agent", Name: "Agent", Input: agent}}, {Text: "main done"}}},
		{Name: "resume", Match: scripted.Match{FirstUser: "MAINTASK"}, Replies: []scripted.Reply{{Text: "resumed"}}},
	}})
	st := openTemp(t, sessionstore.WithWorkspace(bed.Workspace))
	cfg := filepath.Join(t.TempDir(), "cfg")
	first := runStep(t, bed, st, cfg, nil, "--", "MAINTASK: delegate")
	if first.result.Get("result").String() != "main done" {
		t.Fatalf("first run: %s\nstderr: %s", first.result.Raw, first.stderr)
	}
	key := sessionstore.Key{ProjectKey: projectKey, SessionID: first.sessionID}
	subs, err := st.ListSubkeys(t.Context(), key)
	if err != nil || len(subs) != 1 || !strings.HasPrefix(subs[0], "subagents/agent-") {
		t.Fatalf("ListSubkeys = %v, %v; want one subagents/agent-<id>", subs, err)
	}
	cliFile := filepath.Join(cfg, "projects", projectKey, first.sessionID, subs[0]+".jsonl")
	rows, _ := st.Load(t.Context(), sessionstore.Key{ProjectKey: projectKey, SessionID: first.sessionID, Subpath: subs[0]})
	var transcriptRows []json.RawMessage
	for _, r := range rows {
		if gjson.GetBytes(r, "type").String() != "agent_metadata" {
			transcriptRows = append(transcriptRows, r)
		}
	}
	assertRowsAreFileLines(t, transcriptRows, cliFile)

	out := filepath.Join(t.TempDir(), "resume-cfg")
	rep, err := st.MaterializeKey(t.Context(), key, out)
	if err != nil || rep.Transcripts != 2 {
		t.Fatalf("Materialize: report %+v, err %v; want 2 transcripts", rep, err)
	}
	written := filepath.Join(out, "projects", projectKey, first.sessionID, subs[0]+".jsonl")
	assertRowsAreFileLines(t, transcriptRows, written)
	if meta, err := os.ReadFile(strings.TrimSuffix(cliFile, ".jsonl") + ".meta.json"); err == nil && len(rows) > len(transcriptRows) {
		got, err := os.ReadFile(strings.TrimSuffix(written, ".jsonl") + ".meta.json")
		if err != nil || !jsonEqual(got, meta) {
			t.Errorf("materialized .meta.json = %s (%v), want %s", got, err, meta)
		}
	} else {
		t.Logf("the CLI mirrored no .meta.json for the subagent (file: %v)", err)
	}
	run, _ := resume(t, bed, st, first.sessionID, "NEXT: report")
	if run.result.Get("result").String() != "resumed" {
		t.Fatalf("resume: %s", run.result.Raw)
	}
	if r := resultsByID(lastRequest(t, bed, "resume"))["toolu_agent"]; !strings.Contains(r.Content, "sub done") {
		t.Errorf("the Agent result is not in the resumed request: %+v", r)
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && fmt.Sprint(x) == fmt.Sprint(y)
}
