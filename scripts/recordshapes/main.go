// Command recordshapes re-records hooks/testdata/shapes from the pinned,
// real Claude Code CLI: the PostToolUse (and PostToolUseFailure) input of
// every bulky tool, which hooks/spill_test.go checks the spill guard
// against. scripts/record-shapes.sh runs it from the repository root.
//
// Lifecycle of a run: start a TLS page server (for WebFetch) and the
// scripted model on loopback, make a temporary HOME and workspace, run
// claude -p once with a hook that saves each hook input to a temporary
// folder, copy the saved inputs to hooks/testdata/shapes/<Tool>[.<mode>|
// .failure].json, then stop both servers and remove the temporary folders.
package main

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/internal/child"
	"github.com/flowerhq/flower/internal/pinned"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// outDir is where the shapes land, relative to the repository root.
const outDir = "hooks/testdata/shapes"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "record-shapes:", err)
		os.Exit(1)
	}
}

// run records the shapes once.
func run() error {
	claude := os.Getenv("FLOWER_CLAUDE")
	if claude == "" {
		claude = pinned.ClaudeRelPath
	}
	claude, err := filepath.Abs(claude)
	if err != nil {
		return err
	}
	if _, err := os.Stat(claude); err != nil {
		return fmt.Errorf("no claude at %s — run scripts/setup.sh", claude)
	}
	page := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><body><h1>flower page</h1><p>%s</p></body></html>", strings.Repeat("petal ", 50))
	}))
	defer page.Close()
	tmp, err := os.MkdirTemp("", "flower-shapes-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	home, ws, rec := filepath.Join(tmp, "home"), filepath.Join(tmp, "ws"), filepath.Join(tmp, "rec")
	for _, d := range []string{home, ws, rec} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("a flower\nanother flower line\n"), 0o644); err != nil {
		return err
	}
	model, err := scripted.Start(script(ws, page.URL), "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer model.Close()
	sf, ca, err := settings(home, rec, page)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := child.Command(ctx, claude, "-p", "--output-format", "stream-json", "--verbose", "--settings", sf,
		"--allowedTools", "Bash Read Grep Glob WebFetch WebSearch ToolSearch", "--", "record shapes")
	cmd.Env = append(scripted.OfflineEnv(os.Environ(), home, model.URL()), "NODE_EXTRA_CA_CERTS="+ca)
	cmd.Dir = ws
	out, err := cmd.CombinedOutput()
	_, res := testbed.ParseStream(out)
	fmt.Printf("claude: %v, result %s\n", err, res.Get("result"))
	for _, r := range model.Requests() {
		fmt.Printf("request %d conv=%q first_user=%.80q tools=%d\n", r.Seq, r.Conversation, r.FirstUser(), len(r.Tools()))
	}
	return save(rec)
}

// script calls each bulky tool once on files in ws and on the page at url.
func script(ws, url string) *scripted.Script {
	call := func(name string, input any) scripted.Reply {
		b, _ := json.Marshal(input)
		return scripted.Reply{ToolUse: &scripted.Block{Name: name, Input: b}}
	}
	return &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "main", Match: scripted.Match{FirstUser: "record shapes"}, Replies: []scripted.Reply{
			call("Bash", map[string]any{"command": "echo shape-bash; echo to-stderr >&2", "description": "echo"}),
			call("Read", map[string]any{"file_path": filepath.Join(ws, "notes.txt")}),
			call("Grep", map[string]any{"pattern": "flower", "output_mode": "content", "-n": true}),
			call("Grep", map[string]any{"pattern": "flower"}),
			call("Grep", map[string]any{"pattern": "flower", "output_mode": "count"}),
			call("Glob", map[string]any{"pattern": "*.txt"}),
			call("ToolSearch", map[string]any{"query": "select:WebFetch,WebSearch", "max_results": 5}),
			call("WebFetch", map[string]any{"url": url + "/page", "prompt": "what is on the page"}),
			call("WebSearch", map[string]any{"query": "flower framework"}),
			{Text: "recorded"},
		}},
		{Name: "nested", Func: func(scripted.Request) scripted.Reply {
			return scripted.Reply{Text: "nested model answer about flower"}
		}},
	}}
}

// settings writes a settings.json whose PostToolUse and PostToolUseFailure
// hooks save their input into rec, and the page's certificate for node to
// trust (WebFetch upgrades to https).
func settings(home, rec string, page *httptest.Server) (settingsFile, caFile string, err error) {
	record := fmt.Sprintf("cat > %s/$$-$RANDOM.json; echo '{}'", rec)
	s := fmt.Sprintf(`{"skipWebFetchPreflight":true,"hooks":{"PostToolUse":[{"matcher":"*","hooks":[{"type":"command","command":%q}]}],
	  "PostToolUseFailure":[{"matcher":"*","hooks":[{"type":"command","command":%q}]}]}}`, record, record)
	settingsFile, caFile = filepath.Join(home, "settings.json"), filepath.Join(home, "ca.pem")
	if err := os.WriteFile(settingsFile, []byte(s), 0o644); err != nil {
		return "", "", err
	}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: page.Certificate().Raw})
	return settingsFile, caFile, os.WriteFile(caFile, ca, 0o644)
}

// save copies every recorded hook input into outDir under its tool's name.
func save(rec string) error {
	files, _ := filepath.Glob(filepath.Join(rec, "*.json"))
	if len(files) == 0 {
		return fmt.Errorf("no hook input was recorded")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		in := gjson.ParseBytes(data)
		name := in.Get("tool_name").String()
		if in.Get("hook_event_name").String() == "PostToolUseFailure" {
			name += ".failure"
		}
		if name == "Grep" {
			mode := in.Get("tool_input.output_mode").String()
			if mode == "" {
				mode = "files_with_matches"
			}
			name += "." + mode
		}
		out := filepath.Join(outDir, name+".json")
		if err := os.WriteFile(out, data, 0o644); err != nil {
			return err
		}
		fmt.Printf("recorded %s: %.300s\n", out, in.Get("tool_response").Raw)
	}
	return nil
}
