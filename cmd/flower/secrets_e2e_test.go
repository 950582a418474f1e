package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowerhq/flower/scripted"
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
	s := demoScript(ws)
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
	os.WriteFile(answers, []byte(demoAnswer+"\n"), 0o644)
	runDir := filepath.Join(t.TempDir(), "runs")
	cmd := testbed.Command(t, flower, "--json", "--timeout", "0", "--answers", answers, "--run-dir", runDir, "-")
	cmd.Env = flowerEnv(t, bed.Env(), bed.Claude, "ANTHROPIC_API_KEY="+testAPIKey, "GITHUB_TOKEN="+testGHToken)
	cmd.Dir = bed.Workspace
	cmd.Stdin = strings.NewReader(demoAsk + "\n")
	out, errs := mustOutput(t, cmd, "flower")
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
