package acceptance

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowerhq/flower/internal/demo"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/fakesecrets"
	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/pgtest"
	"github.com/flowerhq/flower/testkit/testbed"
)

// Secrets of the secrets test: the API key and a GITHUB_TOKEN-shaped value
// (a variable flower does not name, caught by its suffix and its shape).
const (
	testAPIKey   = "sk-ant-api03-NOLEAK-7f3a9c1e5b2d4f6a8c0e"
	testGHToken  = "ghp_NoLeak0123456789abcdefABCDEF012345"
	secretFooter = "\n- 备注: 密钥 " + testAPIKey + " 和 " + testGHToken
)

// leakyScript is the demo's model with both secrets in the clarifier's
// brief and in the coder's Bash call (its command echoes them: the tool
// input and its output hold them).
func leakyScript(ws string) *scripted.Script {
	s := flowerbin.DemoScript(ws)
	for i := range s.Conversations {
		c := &s.Conversations[i]
		for j := range c.Replies {
			rep := &c.Replies[j]
			switch {
			case c.Name == "clarify" && rep.Text != "":
				rep.Text += secretFooter
			case c.Name == "coder" && rep.ToolUse != nil && rep.ToolUse.Name == "Bash":
				in, _ := json.Marshal(map[string]string{"command": "echo " + testAPIKey + " " + testGHToken + "; cat -n numbers.txt", "description": "show the list"})
				rep.ToolUse.Input = in
			}
		}
	}
	return s
}

// TestE2E_NoSecretOnDiskOrStdout: a whole starter flow whose clarifier
// writes the API key and a GitHub token into the brief, and whose coder
// echoes both in a Bash call, with both in flower's environment: no file
// under the run dir or the workspace's .flower, nor flower's stdout (--json)
// or stderr, holds either. Control: the model's requests do hold both (they
// went through flower, and claude sends them on; flower only keeps them out
// of what it writes and prints).
func TestE2E_NoSecretOnDiskOrStdout(t *testing.T) {
	t.Parallel()
	bed := testbed.NewFor(t, leakyScript)
	flower := testbed.BuildBinary(t, "./cmd/flower")
	answers := filepath.Join(t.TempDir(), "answers.txt")
	os.WriteFile(answers, []byte(demo.Answer+"\n"), 0o644)
	runDir := filepath.Join(t.TempDir(), "runs")
	flowerbin.MarkSelfTested(t, runDir, bed.Claude)
	cmd := testbed.Command(t, flower, "--json", "--timeout", "0", "--answers", answers, "--run-dir", runDir, "-")
	cmd.Env = flowerbin.Env(t, bed.Env(), bed.Claude, "ANTHROPIC_API_KEY="+testAPIKey, "GITHUB_TOKEN="+testGHToken)
	cmd.Dir = bed.Workspace
	cmd.Stdin = strings.NewReader(demo.Ask + "\n")
	out, errs := flowerbin.Output(t, cmd, "flower")
	sent := 0
	for _, r := range bed.Model.Requests() {
		if bytes.Contains(r.Body, []byte(testAPIKey)) && bytes.Contains(r.Body, []byte(testGHToken)) {
			sent++
		}
	}
	if sent == 0 {
		t.Fatal("control: no request to the model held both secrets; the test proves nothing")
	}
	for what, data := range map[string][]byte{"stdout": out, "stderr": []byte(errs)} {
		for _, secret := range []string{testAPIKey, testGHToken} {
			if bytes.Contains(data, []byte(secret)) {
				t.Errorf("%s holds %.12s…", what, secret)
			}
		}
	}
	files := 0
	for _, root := range []string{runDir, filepath.Join(bed.Workspace, ".flower")} {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			files++
			data, _ := os.ReadFile(path)
			for _, secret := range []string{testAPIKey, testGHToken} {
				if bytes.Contains(data, []byte(secret)) && !strings.HasSuffix(path, ".credentials.json") {
					t.Errorf("%s holds %.12s…", path, secret)
				}
			}
			return nil
		})
	}
	if files < 10 {
		t.Errorf("only %d files written: the flow did not run", files)
	}
	if b, _ := os.ReadFile(filepath.Join(bed.Workspace, ".flower", "notes", "需求.md")); !bytes.Contains(b, []byte("[redacted]")) {
		t.Errorf("the brief does not show the redaction: %s", b)
	}
}

// shapesText is every fake secret shape, each starting a line.
func shapesText() (text string, secrets []string) {
	var b strings.Builder
	for _, s := range fakesecrets.Samples() {
		b.WriteString(s.Text + "\n")
		secrets = append(secrets, s.Secrets...)
	}
	return b.String(), secrets
}

// shapesScript is the demo's model with every secret shape at line starts
// in the clarifier's brief, and a coder whose Bash call cats keys.txt (a
// file of the workspace holding them all: the tool output has them at line
// starts, in claude's JSON after an escaped newline).
func shapesScript(ws string) *scripted.Script {
	text, _ := shapesText()
	s := flowerbin.DemoScript(ws)
	for i := range s.Conversations {
		c := &s.Conversations[i]
		for j := range c.Replies {
			rep := &c.Replies[j]
			switch {
			case c.Name == "clarify" && rep.Text != "":
				rep.Text += "\n\n" + text
			case c.Name == "coder" && rep.ToolUse != nil && rep.ToolUse.Name == "Bash":
				in, _ := json.Marshal(map[string]string{"command": "cat keys.txt; cat -n numbers.txt", "description": "show the keys and the list"})
				rep.ToolUse.Input = in
			}
		}
	}
	return s
}

// TestE2E_EveryShapeKeptOut: every secret shape of testkit/fakesecrets, at
// line starts in the ask, in the clarifier's brief and in a tool's output
// (a Bash cat of a file holding them), with sessions in PostgreSQL: none
// of them is in any file under the run dir or the workspace's .flower, in
// flower's stdout or stderr, or in a pg_dump of the store; `queue add` of
// the same ask says it removed secrets and the dump after it holds none
// (river_job.args). Control: the model's requests held every secret (they
// went through flower, which only keeps them out of what it writes).
func TestE2E_EveryShapeKeptOut(t *testing.T) {
	t.Parallel()
	text, secrets := shapesText()
	store := pgtest.URL(t)
	pgDump := pgDumpPath(t)
	bed := testbed.NewFor(t, shapesScript)
	if err := os.WriteFile(filepath.Join(bed.Workspace, "keys.txt"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	flower := testbed.BuildBinary(t, "./cmd/flower")
	answers := filepath.Join(t.TempDir(), "answers.txt")
	os.WriteFile(answers, []byte(demo.Answer+"\n"), 0o644)
	runDir := filepath.Join(t.TempDir(), "runs")
	flowerbin.MarkSelfTested(t, runDir, bed.Claude)
	ask := demo.Ask + "\n" + text
	cmd := testbed.Command(t, flower, "--json", "--timeout", "0", "--answers", answers, "--run-dir", runDir, "--store", store, "-")
	cmd.Env = flowerbin.Env(t, bed.Env(), bed.Claude)
	cmd.Dir = bed.Workspace
	cmd.Stdin = strings.NewReader(ask + "\n")
	out, errs := flowerbin.Output(t, cmd, "flower")
	var bodies []byte
	for _, r := range bed.Model.Requests() {
		bodies = append(bodies, r.Body...)
	}
	queue := testbed.Command(t, flower, "queue", "add", "--workspace", bed.Workspace, "--store", store, ask)
	queue.Env = flowerbin.Env(t, bed.Env(), bed.Claude)
	qOut, qErr := flowerbin.Output(t, queue, "flower queue add")
	if !strings.Contains(qErr, "pass secrets through the worker's environment") {
		t.Errorf("queue add did not say it removed secrets: %s", qErr)
	}
	dump := testbed.Command(t, pgDump, "--no-owner", store)
	dumped, _ := flowerbin.Output(t, dump, "pg_dump")
	if !bytes.Contains(dumped, []byte("river_job")) || !bytes.Contains(dumped, []byte("[redacted]")) {
		t.Errorf("the dump holds no river_job or no redaction (%d bytes)", len(dumped))
	}
	seen := map[string][]byte{"stdout": out, "stderr": []byte(errs), "queue stdout": qOut, "queue stderr": []byte(qErr), "pg_dump": dumped}
	files := 0
	for _, root := range []string{runDir, filepath.Join(bed.Workspace, ".flower")} {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				files++
				seen[path], _ = os.ReadFile(path)
			}
			return nil
		})
	}
	if files < 10 {
		t.Errorf("only %d files written: the flow did not run", files)
	}
	for _, sec := range secrets {
		if !bytes.Contains(bodies, []byte(sec)) {
			t.Errorf("control: no request to the model held %.12s…", sec)
		}
		for what, data := range seen {
			if bytes.Contains(data, []byte(sec)) {
				t.Errorf("%s holds %.12s…", what, sec)
			}
		}
	}
}

// pgDumpPath finds pg_dump beside the cluster's postgres (Debian keeps it
// off PATH).
func pgDumpPath(t *testing.T) string {
	if p, err := exec.LookPath("pg_dump"); err == nil {
		return p
	}
	ms, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_dump")
	if len(ms) == 0 {
		testbed.Unavailable(t, "pg_dump is not installed (it comes with postgresql)")
	}
	return ms[len(ms)-1]
}
