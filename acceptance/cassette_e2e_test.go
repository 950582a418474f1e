package acceptance

import (
	"bytes"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/internal/demo"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/testbed"
)

// cassetteKey is the credential the recorded run uses; it must never reach
// the cassette.
const cassetteKey = "sk-ant-test-CASSETTE-9f3b2c71d0"

// workspaceFiles maps every file under ws, outside .flower, to its content,
// and lists .flower's files by name.
func workspaceFiles(t *testing.T, ws string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(ws, p)
		if strings.HasPrefix(rel, ".flower"+string(filepath.Separator)) {
			out[rel] = "(present)"
			return nil
		}
		b, _ := os.ReadFile(p)
		out[rel] = string(b)
		return nil
	})
	return out
}

// starterRun runs the starter flow on the demo ask in ws against url.
func cassetteStarterRun(t *testing.T, flower, ws, home, url, ask string, extraEnv ...string) ([]gjson.Result, string, error) {
	t.Helper()
	os.MkdirAll(ws, 0o700)
	os.MkdirAll(home, 0o700)
	answers := filepath.Join(t.TempDir(), "answers.txt")
	os.WriteFile(answers, []byte(demo.Answer+"\n"), 0o600)
	runDir := filepath.Join(t.TempDir(), "runs")
	flowerbin.MarkSelfTested(t, runDir, testbed.ClaudePath(t))
	cmd := testbed.Command(t, flower, "--json", "--timeout", "0", "--answers", answers, "--run-dir", runDir, ask)
	cmd.Env = flowerbin.Env(t, testbed.BaseEnv(home, url), testbed.ClaudePath(t), extraEnv...)
	cmd.Dir = ws
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var lines []gjson.Result
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if gjson.Valid(l) {
			lines = append(lines, gjson.Parse(l))
		}
	}
	if len(lines) == 0 {
		t.Fatalf("flower printed no JSON: %v\n%s\n%s", err, stderr.String(), flowerbin.Tail(out))
	}
	return lines, stderr.String(), err
}

// TestE2E_CassetteRecordReplay: the starter flow recorded through `flower
// model record` with the scripted model upstream, then replayed by `flower
// model serve --cassette` in another workspace with no upstream running:
// same verdict, same files, same number of requests; the cassette holds no
// key; a changed ask gets the 400 that names the closest recorded request
// and where it differs.
func TestE2E_CassetteRecordReplay(t *testing.T) {
	t.Parallel()
	testbed.ClaudePath(t)
	flower := testbed.BuildBinary(t, "./cmd/flower")
	dir := t.TempDir()
	cassette := filepath.Join(dir, "starter.cassette")

	// The upstream: the demo's scripted model, behind a handler that notes
	// the key each request carried (the control for the grep below).
	ws1 := filepath.Join(dir, "record", "ws")
	model, err := scripted.Start(flowerbin.DemoScript(ws1), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	keys := map[string]bool{}
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys[r.Header.Get("X-Api-Key")] = true
		mu.Unlock()
		model.ServeHTTP(w, r)
	}))
	rec := flowerbin.StartModel(t, flower, []string{"ANTHROPIC_API_KEY=" + cassetteKey}, "record", "--upstream", upstream.URL, "--out", cassette, "--addr", "127.0.0.1:0")
	lines1, stderr1, err := cassetteStarterRun(t, flower, ws1, filepath.Join(dir, "record", "home"), rec.URL, demo.Ask, "ANTHROPIC_API_KEY="+cassetteKey)
	if err != nil {
		t.Fatalf("recorded run: %v\n%s", err, stderr1)
	}
	rec.Stop(t)
	upstream.Close()
	model.Close()
	recorded := 0
	for _, r := range model.Requests() {
		if r.Path == "/v1/messages" {
			recorded++
		}
	}
	if !keys[cassetteKey] || recorded < 5 {
		t.Fatalf("the upstream saw keys %v over %d requests: the run did not go through the proxy with the key", keys, recorded)
	}
	tape, err := os.ReadFile(cassette)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(tape, []byte(cassetteKey)) || bytes.Contains(bytes.ToLower(tape), []byte(`"x-api-key"`)) {
		t.Fatal("the cassette contains the API key")
	}
	if n := bytes.Count(tape, []byte("\n")); n != recorded {
		t.Errorf("cassette has %d exchanges, the upstream answered %d", n, recorded)
	}

	// Replay: no upstream, another workspace and HOME.
	srv := flowerbin.StartModel(t, flower, nil, "serve", "--cassette", cassette, "--addr", "127.0.0.1:0", "-v")
	ws2 := filepath.Join(dir, "replay", "ws")
	lines2, stderr2, err := cassetteStarterRun(t, flower, ws2, filepath.Join(dir, "replay", "home"), srv.URL, demo.Ask)
	if err != nil {
		t.Fatalf("replayed run: %v\n%s\nserver: %s", err, stderr2, srv.Stderr())
	}
	last1, last2 := lines1[len(lines1)-1], lines2[len(lines2)-1]
	if last1.Get("verdict").String() != "achieved" || last2.Get("verdict").String() != last1.Get("verdict").String() ||
		last2.Get("exit_code").Int() != last1.Get("exit_code").Int() {
		t.Errorf("verdicts: recorded %s, replayed %s", last1.Raw, last2.Raw)
	}
	f1, f2 := workspaceFiles(t, ws1), workspaceFiles(t, ws2)
	if !sameFiles(f1, f2) || f1["hello.txt"] != demo.Answer+"\n" {
		t.Errorf("workspace files differ:\nrecorded %v\nreplayed %v", names(f1), names(f2))
	}
	replayed := strings.Count(srv.Stderr(), "POST /v1/messages ")
	if replayed != recorded || strings.Contains(srv.Stderr(), "status=400") {
		t.Errorf("replayed %d requests, recorded %d; server log:\n%s", replayed, recorded, srv.Stderr())
	}

	// A changed ask: the 400 names the closest recorded request and the
	// first difference.
	before := len(srv.Stderr())
	changed := strings.Replace(demo.Ask, "hello", "HOWDY", 1)
	if changed == demo.Ask {
		t.Fatalf("the demo ask %q has no word to change", demo.Ask)
	}
	lines3, _, err := cassetteStarterRun(t, flower, filepath.Join(dir, "changed", "ws"), filepath.Join(dir, "changed", "home"), srv.URL, changed)
	if err == nil || lines3[len(lines3)-1].Get("ok").Bool() {
		t.Errorf("the changed ask succeeded on replay: %s", lines3[len(lines3)-1].Raw)
	}
	srv.Stop(t)
	log := srv.Stderr()[before:]
	if !strings.Contains(log, "status=400") || !strings.Contains(log, "closest is exchange 0") ||
		!strings.Contains(log, "first difference at messages[") || !strings.Contains(log, "HOWDY") {
		t.Errorf("the 400 does not name the closest request and the difference:\n%s", log)
	}
}

func sameFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func names(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
