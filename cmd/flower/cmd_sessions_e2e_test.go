package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// TestE2E_SessionsCommand: a hand-run session mirrored by `flower claude`
// is listed, shown, exported byte for byte, and importable elsewhere.
func TestE2E_SessionsCommand(t *testing.T) {
	t.Parallel()
	s, err := scripted.Parse([]byte(`{"conversations":[{"name":"main","replies":[
	  {"tool_use":{"name":"Bash","input":{"command":"ls","description":"list"}}},{"text":"SESSIONS-OK"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	bed := testbed.New(t, s)
	flower := testbed.BuildBinary(t, "./cmd/flower")
	runDir := filepath.Join(t.TempDir(), "runs")
	env := dropInEnv(t, bed, runDir)
	run := func(args ...string) (string, int) {
		t.Helper()
		cmd := testbed.Command(t, flower, args...)
		cmd.Env, cmd.Dir = env, bed.Workspace
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.Run()
		if errb.Len() > 0 {
			t.Logf("flower %v stderr: %s", args, errb.String())
		}
		return out.String(), cmd.ProcessState.ExitCode()
	}
	out, code := run("claude", "-p", "--output-format", "json", "hello")
	id := gjson.Get(out, "session_id").String()
	if code != 0 || id == "" {
		t.Fatalf("claude: %d %s", code, out)
	}
	if out, _ := run("sessions", "list"); !strings.Contains(out, id) {
		t.Fatalf("list lacks %s:\n%s", id, out)
	}
	transcript := filepath.Join(bed.Home, ".claude", "projects", scripted.ProjectDirName(bed.Workspace), id+".jsonl")
	raw, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	exported, code := run("sessions", "export", id[:8])
	if code != 0 || exported != string(raw) {
		t.Fatalf("export (exit %d) differs from claude's transcript:\n%d vs %d bytes", code, len(exported), len(raw))
	}
	shown, _ := run("sessions", "show", "--trimmed", id)
	if n := strings.Count(shown, "\n"); n < 3 || !strings.Contains(shown, "SESSIONS-OK") {
		t.Errorf("trimmed view: %d lines", n)
	}
	list, _ := run("sessions", "list", "--json")
	if arr := gjson.Parse(list).Array(); len(arr) != 1 || arr[0].Get("session_id").String() != id {
		t.Errorf("sessions list --json: %s", list)
	} else {
		checkSchema(t, "sessions list --json", arr[0].Raw)
	}
	js, _ := run("sessions", "show", id, "--json", "--trimmed")
	checkSchema(t, "sessions show --json", js)
	if !gjson.Get(js, "trimmed").Bool() || !strings.Contains(gjson.Get(js, "entries").Raw, "SESSIONS-OK") {
		t.Errorf("sessions show --json: %.300s", js)
	}
	if rep, code := run("sessions", "report", id, "--json"); code != 0 || gjson.Get(rep, "entries").Int() == 0 || gjson.Get(rep, "kind").String() != "session_report" {
		t.Errorf("report: %d %s", code, rep)
	} else {
		checkSchema(t, "sessions report --json", rep)
	}
	other := filepath.Join(t.TempDir(), "other")
	env = append(env, "FLOWER_RUN_DIR="+other)
	if out, code := run("sessions", "import", transcript); code != 0 || !strings.Contains(out, "imported") {
		t.Fatalf("import: %d %s", code, out)
	}
	if again, _ := run("sessions", "export", id); again != string(raw) {
		t.Errorf("imported copy differs")
	}
	if _, code := run("sessions", "show", "no-such-session"); code != 1 {
		t.Errorf("unknown id: exit %d, want 1", code)
	}
	if _, code := run("sessions", "show"); code != 2 {
		t.Errorf("missing id: exit %d, want 2", code)
	}
}
