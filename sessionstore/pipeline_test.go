package sessionstore_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/sessionstore"
)

// Transcript builders in the CLI's layout: one line per content block, a
// tool result on its own user line, lines chained by parentUuid.

func toolTurn(id, name, input, result string) []string {
	res, _ := json.Marshal(result)
	return []string{
		fmt.Sprintf(`{"type":"assistant","message":{"id":"msg_%s","role":"assistant","content":[{"type":"tool_use","id":"%s","name":"%s","input":%s}]}}`, id, id, name, input),
		fmt.Sprintf(`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"%s","type":"tool_result","content":%s,"is_error":false}]},"toolUseResult":{"stdout":%s}}`, id, res, res),
	}
}

func bashTurn(id, cmd, result string) []string {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return toolTurn(id, "Bash", string(in), result)
}

func denialTurn(id, path string) []string {
	return []string{
		fmt.Sprintf(`{"type":"assistant","message":{"id":"msg_%s","role":"assistant","content":[{"type":"tool_use","id":"%s","name":"Write","input":{"file_path":"%s","content":"x"}}]}}`, id, id, path),
		fmt.Sprintf(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"Claude requested permissions to write to %s, but you haven't granted it yet.","is_error":true,"tool_use_id":"%s"}]},"toolUseResult":"Error: denied","toolDenialKind":"user-rejected","permissionDecision":{"decision":"reject","source":"config"}}`, path, id),
	}
}

func textTurn(id, text string) []string {
	return []string{fmt.Sprintf(`{"type":"assistant","message":{"id":"msg_%s","role":"assistant","content":[{"type":"text","text":%q}]}}`, id, text)}
}

func prompt(text string) []string {
	return []string{fmt.Sprintf(`{"type":"user","message":{"role":"user","content":%q}}`, text)}
}

// transcriptLines chains the parts: uuid u1, u2, … and parentUuid the line before.
func transcriptLines(parts ...[]string) []json.RawMessage {
	var out []json.RawMessage
	parent := "null"
	for _, p := range parts {
		for _, l := range p {
			uuid := fmt.Sprintf("u%d", len(out)+1)
			out = append(out, json.RawMessage(fmt.Sprintf(`{"parentUuid":%s,"uuid":%q,%s`, parent, uuid, l[1:])))
			parent = `"` + uuid + `"`
		}
	}
	return out
}

func loadResume(t *testing.T, s *sessionstore.Store, lines []json.RawMessage) ([]json.RawMessage, sessionstore.TrimReport) {
	t.Helper()
	key := sessionstore.Key{ProjectKey: "pk", SessionID: "s1"}
	if err := s.Append(t.Context(), key, lines); err != nil {
		t.Fatal(err)
	}
	out, rep, err := s.LoadForResume(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := s.Load(t.Context(), key)
	if !slices.EqualFunc(raw, lines, func(a, b json.RawMessage) bool { return string(a) == string(b) }) {
		t.Fatal("LoadForResume changed the stored rows")
	}
	if rep != s.LastReport() {
		t.Fatalf("LastReport %+v != returned %+v", s.LastReport(), rep)
	}
	for _, e := range out {
		if !json.Valid(e) {
			t.Fatalf("pipeline produced invalid JSON: %s", e)
		}
	}
	assertChain(t, out)
	return out, rep
}

// assertChain checks that every parentUuid names an earlier line.
func assertChain(t *testing.T, out []json.RawMessage) {
	t.Helper()
	seen := map[string]bool{}
	for _, e := range out {
		if p := gjson.GetBytes(e, "parentUuid"); p.Type == gjson.String && !seen[p.Str] {
			t.Fatalf("line %s has parentUuid %s, which is not an earlier line", gjson.GetBytes(e, "uuid"), p.Str)
		}
		seen[gjson.GetBytes(e, "uuid").String()] = true
	}
}

// resultOf is the content of the tool_result for id ("" if absent) as JSON.
func resultOf(out []json.RawMessage, id string) gjson.Result {
	for _, e := range out {
		for _, b := range gjson.GetBytes(e, "message.content").Array() {
			if b.Get("type").String() == "tool_result" && b.Get("tool_use_id").String() == id {
				return b.Get("content")
			}
		}
	}
	return gjson.Result{}
}

func hasToolUse(out []json.RawMessage, id string) bool {
	for _, e := range out {
		for _, b := range gjson.GetBytes(e, "message.content").Array() {
			if b.Get("type").String() == "tool_use" && b.Get("id").String() == id {
				return true
			}
		}
	}
	return false
}

func noTrim() sessionstore.Option {
	p := sessionstore.DefaultTrimPolicy()
	p.Enabled = false
	return sessionstore.WithTrim(p)
}

func TestExpire(t *testing.T) {
	big := strings.Repeat("z", 2500)
	// Turns: 0 git status, 1 rm (not ephemeral), 2 Read, 3 big ls, 4..8 filler, 9 ls (recent).
	parts := [][]string{prompt("go"),
		bashTurn("t_git", "git status", "On branch main"),
		bashTurn("t_rm", "rm -rf build", "removed"),
		toolTurn("t_read", "Read", `{"file_path":"/a"}`, "file text"),
		bashTurn("t_bigls", "ls -R", big),
	}
	for i := range 5 {
		parts = append(parts, bashTurn(fmt.Sprintf("t_f%d", i), "echo filler", "filler"))
	}
	parts = append(parts, bashTurn("t_recent", "ls", "a b c"), textTurn("end", "done"))
	lines := transcriptLines(parts...)

	for _, tc := range []struct {
		name      string
		policy    sessionstore.EphemeralPolicy
		want      map[string]string
		wantCount int
	}{
		{"defaults", sessionstore.DefaultEphemeralPolicy(), map[string]string{
			"t_git":    "[git status 的结果已过期(第 10 轮前),当前状态可能已变。需要请重新执行]",
			"t_rm":     "removed",
			"t_read":   "file text",
			"t_bigls":  big, // over max_chars: left to trim
			"t_f0":     "[echo filler 的结果已过期(第 6 轮前),当前状态可能已变。需要请重新执行]",
			"t_f1":     "filler", // 5 turns ago: inside keep_recent 6
			"t_recent": "a b c",
		}, 2},
		{"no max_chars bound", sessionstore.EphemeralPolicy{Enabled: true, KeepRecent: 6, Text: "gone {cmd}/{age}"}, map[string]string{
			"t_git": "gone git status/10", "t_bigls": "gone ls -R/7", "t_f0": "gone echo filler/6", "t_f1": "filler",
		}, 3},
		{"disabled", sessionstore.EphemeralPolicy{Enabled: false, KeepRecent: 0, MaxChars: 0, Text: "x"}, map[string]string{
			"t_git": "On branch main", "t_recent": "a b c",
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openTemp(t, noTrim(), sessionstore.WithEphemeral(tc.policy))
			out, rep := loadResume(t, s, lines)
			for id, want := range tc.want {
				if got := resultOf(out, id).String(); got != want {
					t.Errorf("%s = %.80q, want %.80q", id, got, want)
				}
			}
			if rep.Expired != tc.wantCount {
				t.Errorf("report.Expired = %d, want %d", rep.Expired, tc.wantCount)
			}
		})
	}
}

func TestTrim(t *testing.T) {
	long := strings.Repeat("line of output ü\n", 300) // 5100 chars
	image := `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}`
	mixed := []string{
		`{"type":"assistant","message":{"id":"msg_img","role":"assistant","content":[{"type":"tool_use","id":"t_img","name":"Read","input":{"file_path":"/p.png"}}]}}`,
		fmt.Sprintf(`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t_img","type":"tool_result","content":[{"type":"text","text":%q},%s,{"type":"text","text":"tail"}]}]}}`, long, image),
	}
	compact := []string{fmt.Sprintf(`{"type":"user","isCompactSummary":true,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t_compact","content":%q}]}}`, long)}
	lines := transcriptLines(prompt("go"), compact,
		toolTurn("t_old", "Read", `{"file_path":"/a"}`, long),
		toolTurn("t_short", "Read", `{"file_path":"/b"}`, "short"),
		mixed,
		toolTurn("t_recent", "Read", `{"file_path":"/c"}`, long),
		textTurn("end", "done"))
	ws := t.TempDir()
	policy := sessionstore.TrimPolicy{KeepRecent: 2, MinChars: 2000, SpillDirname: ".flower/spill", Enabled: true, PreviewChars: 10}
	s := openTemp(t, sessionstore.WithWorkspace(ws), sessionstore.WithTrim(policy))
	out, rep := loadResume(t, s, lines)

	old := resultOf(out, "t_old").String()
	file, text := spilled(t, old)
	if text != strings.TrimSuffix(long, "\n") {
		t.Fatalf("spill file %s lines named by the pointer are not the original", file)
	}
	if filepath.Dir(file) != filepath.Join(ws, ".flower", "spill") {
		t.Errorf("spill file %s not in <workspace>/.flower/spill", file)
	}
	if !strings.HasSuffix(old, "\n"+long[:10]) {
		t.Errorf("pointer lacks the %d-char preview: %q", 10, old)
	}
	if got := resultOf(out, "t_short").String(); got != "short" {
		t.Errorf("short result changed: %q", got)
	}
	if got := resultOf(out, "t_recent").String(); got != long {
		t.Errorf("result in the last keep_recent turns changed")
	}
	img := resultOf(out, "t_img").Array()
	if len(img) != 2 || img[1].Raw != image || !strings.HasPrefix(img[0].Get("text").String(), sessionstore.TrimPointerFormat[:strings.IndexByte(sessionstore.TrimPointerFormat, '%')]) {
		t.Errorf("mixed result = %s, want [pointer text block, the image block untouched]", resultOf(out, "t_img").Raw)
	}
	for _, e := range out {
		if gjson.GetBytes(e, "isCompactSummary").Bool() && string(e) != string(lines[1]) {
			t.Errorf("isCompactSummary line changed")
		}
	}
	if _, text := spilled(t, img[0].Get("text").String()); text != long+"tail" {
		t.Errorf("mixed result's spilled text = %.40q…, want its text blocks joined", text)
	}
	if rep.Trimmed != 2 || rep.SpillFiles != 1 || rep.TrimmedBytes < 2*len(long) || rep.BytesOut >= rep.BytesIn {
		t.Errorf("report = %+v, want 2 trimmed into 1 spill file", rep)
	}
	// Loading again writes no new spill file (content-addressed).
	if _, rep2, _ := s.LoadForResume(t.Context(), sessionstore.Key{ProjectKey: "pk", SessionID: "s1"}); rep2.SpillFiles != 0 || rep2.Trimmed != 2 {
		t.Errorf("second load report = %+v, want 2 trimmed, no new spill file", rep2)
	}
}

func TestPrune(t *testing.T) {
	lines := transcriptLines(prompt("go"),
		denialTurn("d1", "/etc/a"), bashTurn("t_ok", "echo ok", "ok"),
		denialTurn("d2", "/etc/b"), denialTurn("d3", "/etc/c"), textTurn("end", "done"))
	for _, tc := range []struct {
		name       string
		keep       int
		gone, stay []string
	}{
		{"keep last 1", 1, []string{"d1", "d2"}, []string{"d3", "t_ok"}},
		{"keep 0", 0, []string{"d1", "d2", "d3"}, []string{"t_ok"}},
		{"keep 5", 5, nil, []string{"d1", "d2", "d3", "t_ok"}},
		{"off", -1, nil, []string{"d1", "d2", "d3", "t_ok"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openTemp(t, sessionstore.WithPrune(sessionstore.PrunePolicy{KeepDenials: tc.keep}))
			out, rep := loadResume(t, s, lines)
			for _, id := range tc.gone {
				if hasToolUse(out, id) || resultOf(out, id).Exists() {
					t.Errorf("denial %s still there", id)
				}
			}
			for _, id := range tc.stay {
				if !hasToolUse(out, id) || !resultOf(out, id).Exists() {
					t.Errorf("%s was removed", id)
				}
			}
			if rep.Pruned != len(tc.gone) || rep.PrunedLines != 2*len(tc.gone) || len(out) != len(lines)-2*len(tc.gone) {
				t.Errorf("report = %+v, %d lines out; want %d pruned", rep, len(out), len(tc.gone))
			}
		})
	}
}

func TestRepair(t *testing.T) {
	orphanEnd := transcriptLines(prompt("go"), bashTurn("t1", "echo a", "a"),
		[]string{`{"type":"assistant","message":{"id":"msg_x","role":"assistant","content":[{"type":"tool_use","id":"t_orphan","name":"Bash","input":{"command":"make"}}]}}`})
	// Interrupted, then the user went on: the next prompt chains to the orphan.
	orphanMid := transcriptLines(prompt("go"),
		[]string{`{"type":"assistant","message":{"id":"msg_x","role":"assistant","content":[{"type":"tool_use","id":"t_orphan","name":"Bash","input":{"command":"make"}}]}}`},
		prompt("again"), textTurn("end", "ok"))
	// Two parallel calls: t_p1's result arrived, t_p2's did not.
	parallel := transcriptLines(prompt("go"), []string{
		`{"type":"assistant","message":{"id":"msg_p","role":"assistant","content":[{"type":"tool_use","id":"t_p1","name":"Bash","input":{"command":"echo 1"}}]}}`,
		`{"type":"assistant","message":{"id":"msg_p","role":"assistant","content":[{"type":"tool_use","id":"t_orphan","name":"Bash","input":{"command":"echo 2"}}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t_p1","type":"tool_result","content":"1"}]}}`,
	}, textTurn("end", "ok"))
	for _, tc := range []struct {
		name        string
		lines       []json.RawMessage
		wantAfter   string // uuid of the line the synthetic result follows
		wantChildOf string // uuid of a line that must now chain to the synthetic result ("" = none)
	}{
		{"orphan at the end", orphanEnd, "u4", ""},
		{"orphan mid-transcript", orphanMid, "u2", "u3"},
		{"one of two parallel calls", parallel, "u4", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openTemp(t)
			out, rep := loadResume(t, s, tc.lines)
			if rep.Repaired != 1 || len(out) != len(tc.lines)+1 {
				t.Fatalf("report = %+v, %d lines; want 1 repaired, 1 line added", rep, len(out))
			}
			var syn gjson.Result
			for i, e := range out {
				if resultOf([]json.RawMessage{e}, "t_orphan").Exists() {
					syn = gjson.ParseBytes(e)
					if prev := gjson.GetBytes(out[i-1], "uuid").String(); prev != tc.wantAfter {
						t.Errorf("synthetic result follows %s, want %s", prev, tc.wantAfter)
					}
				}
			}
			if syn.Get("message.content.0.content").String() != sessionstore.RepairText || !syn.Get("message.content.0.is_error").Bool() {
				t.Fatalf("synthetic result = %s", syn.Raw)
			}
			if tc.wantChildOf != "" {
				for _, e := range out {
					if gjson.GetBytes(e, "uuid").String() == tc.wantChildOf && gjson.GetBytes(e, "parentUuid").String() != syn.Get("uuid").String() {
						t.Errorf("%s chains to %s, want the synthetic result %s", tc.wantChildOf, gjson.GetBytes(e, "parentUuid"), syn.Get("uuid"))
					}
				}
			}
			again, _, _ := s.LoadForResume(t.Context(), sessionstore.Key{ProjectKey: "pk", SessionID: "s1"})
			if !slices.EqualFunc(again, out, func(a, b json.RawMessage) bool { return string(a) == string(b) }) {
				t.Error("a second load repaired differently (the synthetic uuid must be stable)")
			}
		})
	}
}

// TestPreviewWritesNothing: Preview gives what LoadForResume gives, without
// writing the spill file it points at.
func TestPreviewWritesNothing(t *testing.T) {
	long := strings.Repeat("preview me\n", 400)
	lines := transcriptLines(prompt("go"), toolTurn("t_old", "Read", `{"file_path":"/a"}`, long), textTurn("e", "done"))
	ws := t.TempDir()
	trim := sessionstore.DefaultTrimPolicy()
	trim.KeepRecent = 0
	s := openTemp(t, sessionstore.WithWorkspace(ws), sessionstore.WithTrim(trim))
	key := sessionstore.Key{ProjectKey: "pk", SessionID: "s1"}
	if err := s.Append(t.Context(), key, lines); err != nil {
		t.Fatal(err)
	}
	preview, prep, err := s.Preview(t.Context(), key)
	if err != nil || prep.Trimmed != 1 || prep.SpillFiles != 0 {
		t.Fatalf("Preview: report %+v, err %v", prep, err)
	}
	file, _, _ := readTrimPointer(t, resultOf(preview, "t_old").String())
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("Preview wrote %s (stat: %v)", file, err)
	}
	loaded, rep, err := s.LoadForResume(t.Context(), key)
	if err != nil || rep.SpillFiles != 1 {
		t.Fatalf("LoadForResume: report %+v, err %v", rep, err)
	}
	if !slices.EqualFunc(preview, loaded, func(a, b json.RawMessage) bool { return string(a) == string(b) }) {
		t.Fatal("Preview and LoadForResume differ")
	}
	if _, text := spilled(t, resultOf(loaded, "t_old").String()); text != strings.TrimSuffix(long, "\n") {
		t.Fatal("the spill file LoadForResume wrote does not hold the text at the lines Preview named")
	}
}

// readTrimPointer reads a trim pointer (sessionstore.TrimPointerFormat):
// the spill file it names and its lines from-to.
func readTrimPointer(t *testing.T, content string) (file string, from, to int) {
	t.Helper()
	var chars, offset, limit int
	if _, err := fmt.Sscanf(content, sessionstore.TrimPointerFormat, &chars, &file, &from, &to, &offset, &limit); err != nil || offset != from {
		t.Fatalf("not a trim pointer: %.200q (%v)", content, err)
	}
	return file, from, to
}
