package webui

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flowerhq/flower/fleet"
	"github.com/flowerhq/flower/harness"
)

// xss is a payload that must stay text wherever it lands.
const xss = `<script>document.title="pwned"</script><img src=x onerror=alert(1)>`

// fixture writes a run dir of n runs (the newest one with a judge round
// whose text holds xss, a denial and a spill) and returns it with the
// workspace.
func fixture(t testing.TB, n int) (runDir, ws string) {
	t.Helper()
	base := t.TempDir()
	runDir, ws = filepath.Join(base, "runs"), filepath.Join(base, "ws")
	spillDir := filepath.Join(ws, ".flower", "spill")
	os.MkdirAll(spillDir, 0o700)
	os.MkdirAll(filepath.Join(ws, ".flower", "notes"), 0o700)
	os.WriteFile(filepath.Join(spillDir, "out.txt"), []byte("SPILLED-TEXT 1\n2\n3\n"), 0o600)
	os.WriteFile(filepath.Join(base, "secret.txt"), []byte("NOT-A-SPILL"), 0o600)
	os.WriteFile(filepath.Join(ws, ".flower", "notes", "需求.md"), []byte("## 目标\nBRIEF-MARK "+xss+"\n"), 0o600)
	var rows []harness.ManifestRow
	t0 := 1.7e9
	for i := range n {
		st := t0 + float64(i)*60
		rows = append(rows, harness.ManifestRow{Run: fmt.Sprintf("run-%04d", i), Workspace: ws, StartedAt: st, UpdatedAt: st + 30,
			Results: []harness.StepResult{
				{Step: "确认需求", OK: true, CostUSD: 0.01, NumTurns: 2, Text: "## 目标\nASK-" + fmt.Sprint(i) + "\n## 验收标准\n- x", StartedAt: st, EndedAt: st + 5, Attempts: 1},
				{Step: "执行", OK: true, CostUSD: 0.1, NumTurns: 5, Text: "done", StartedAt: st + 5, EndedAt: st + 20, Attempts: 2, Errors: []string{"api 529"}, Context: 90_000},
				{Step: "执行-评审#1", OK: true, CostUSD: 0.02, NumTurns: 1, Text: "## 结论\n已达成\n## 理由\nJUDGE " + xss + "\n## 未通过\n无", StartedAt: st + 20, EndedAt: st + 30, Attempts: 1},
			}})
	}
	b, _ := json.Marshal(rows)
	os.MkdirAll(runDir, 0o700)
	os.WriteFile(filepath.Join(runDir, "manifest.json"), b, 0o600)
	last := rows[n-1].Run
	os.MkdirAll(filepath.Join(runDir, last), 0o700)
	ev := func(kind, step string, data map[string]any) string {
		b, _ := json.Marshal(harness.Event{Kind: kind, Step: step, Data: data, Time: time.Unix(1.7e9, 0)})
		return string(b) + "\n"
	}
	events := ev("guard", "执行", map[string]any{"guard": "delegate", "tool": "Write", "decision": "deny", "tool_use_id": "t1"}) +
		ev("guard", "执行", map[string]any{"guard": "spill", "tool": "Bash", "decision": "rewrite", "detail": map[string]any{"files": []any{filepath.Join(spillDir, "out.txt")}}}) +
		ev("verdict", "执行-评审#1", map[string]any{"verdict": "achieved", "reason": "TYPED-REASON", "failed": []any{},
			"checks": []any{map[string]any{"check": "CHECK-ONE " + xss, "passed": true, "evidence": "EVIDENCE-ONE"}}})
	os.WriteFile(filepath.Join(runDir, last, "events.jsonl"), []byte(events), 0o600)
	return runDir, ws
}

// testReader reads the fixture as the command would, simplified.
func testReader(runDir string) Reader {
	return Reader{
		Rows: func(context.Context) ([]harness.ManifestRow, error) {
			return harness.ReadManifest(filepath.Join(runDir, "manifest.json"))
		},
		Outcome: func(r harness.ManifestRow) string { return "achieved" },
		Guards: func(events []harness.Event) (ds []Denial, ss []Spill) {
			for _, ev := range events {
				g, ok := ev.Guard()
				switch {
				case !ok:
				case g.Denied():
					ds = append(ds, Denial{Step: ev.Step, Guard: g.Guard, Tool: g.Tool, Reason: "DENIED-REASON"})
				case g.Spilled():
					for _, f := range g.Detail["files"].([]any) {
						ss = append(ss, Spill{Step: ev.Step, Tool: g.Tool, Path: f.(string), Bytes: 20})
					}
				}
			}
			return ds, ss
		},
	}
}

// fakeQueue records what the fleet page asked for.
type fakeQueue struct{ cancelled []int64 }

func (q *fakeQueue) List(context.Context) ([]fleet.Job, error) {
	return []fleet.Job{{ID: 7, State: "available", Ask: "JOB-ASK " + xss, MaxAttempts: 5}}, nil
}
func (q *fakeQueue) Workers(context.Context) ([]fleet.Worker, error) { return nil, nil }
func (q *fakeQueue) Cancel(_ context.Context, id int64) (string, error) {
	q.cancelled = append(q.cancelled, id)
	return "cancelled", nil
}
func (q *fakeQueue) Retry(context.Context, int64) (string, error) { return "available", nil }

// start serves the fixture and returns the server's base URL, its token
// and the queue behind its fleet page.
func start(t *testing.T) (base, token string, q *fakeQueue) {
	t.Helper()
	runDir, _ := fixture(t, 3)
	q = &fakeQueue{}
	s, err := New(Options{RunDir: runDir, Reader: testReader(runDir), Queue: q})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts.URL, s.Token(), q
}

// client is a browser-like client: it keeps cookies.
func client(t *testing.T) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar}
}

func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestToken: without the token every page is refused; with it once, the
// cookie carries the rest, and the address loses the token. Control: a
// wrong token is refused too.
func TestToken(t *testing.T) {
	base, token, _ := start(t)
	for _, u := range []string{base + "/", base + "/run/run-0002", base + "/fleet", base + "/?token=wrong"} {
		if code, _ := get(t, client(t), u); code != http.StatusForbidden {
			t.Errorf("GET %s without the token: %d, want 403", u, code)
		}
	}
	c := client(t)
	resp, err := c.Get(base + "/?token=" + token)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.Contains(resp.Request.URL.String(), token) {
		t.Errorf("with the token: %d at %s, want 200 at an address without it", resp.StatusCode, resp.Request.URL)
	}
	if code, body := get(t, c, base+"/run/run-0002"); code != 200 || !strings.Contains(body, "TYPED-REASON") {
		t.Errorf("with the cookie: %d\n%s", code, body)
	}
}

// TestPostNeedsTokenAndOrigin: cancel works with the cookie and this
// page's Origin; without the cookie, with another Origin or with none it
// is refused and nothing is cancelled.
func TestPostNeedsTokenAndOrigin(t *testing.T) {
	base, token, q := start(t)
	c := client(t)
	get(t, c, base+"/?token="+token)
	post := func(c *http.Client, origin string) int {
		req, _ := http.NewRequest(http.MethodPost, base+"/fleet/7/cancel", nil)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tt := range []struct {
		name   string
		c      *http.Client
		origin string
	}{{"no token", client(t), base}, {"another origin", c, "http://evil.example"}, {"no origin", c, ""}} {
		if code := post(tt.c, tt.origin); code != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", tt.name, code)
		}
	}
	if len(q.cancelled) != 0 {
		t.Fatalf("cancelled %v without token and origin", q.cancelled)
	}
	if code := post(c, base); code != 200 || len(q.cancelled) != 1 || q.cancelled[0] != 7 { // control
		t.Errorf("with token and origin: %d, cancelled %v", code, q.cancelled)
	}
}

// TestSpillServedOnlyFromTheRunsFolder: the run's spill opens; a name with
// ../ (encoded or not), a file of the folder the run did not spill, and a
// file outside are refused.
func TestSpillServedOnlyFromTheRunsFolder(t *testing.T) {
	base, token, _ := start(t)
	c := client(t)
	get(t, c, base+"/?token="+token)
	if code, body := get(t, c, base+"/run/run-0002/spill/out.txt"); code != 200 || !strings.Contains(body, "SPILLED-TEXT") {
		t.Fatalf("the run's spill: %d %q", code, body)
	}
	for _, p := range []string{"..%2F..%2Fsecret.txt", "..%2fsecret.txt", "%2E%2E", "other.txt"} {
		code, body := get(t, c, base+"/run/run-0002/spill/"+p)
		if code != http.StatusForbidden || strings.Contains(body, "NOT-A-SPILL") {
			t.Errorf("spill %s: %d %q, want refused", p, code, body)
		}
	}
	// A plain ../ never reaches the spill handler: the path is cleaned
	// first (to a page, not a file).
	if _, body := get(t, c, base+"/run/run-0002/spill/../../../secret.txt"); strings.Contains(body, "NOT-A-SPILL") {
		t.Errorf("a plain ../ served the file outside")
	}
	if code, _ := get(t, c, base+"/run/run-0001/spill/out.txt"); code == 200 {
		t.Errorf("another run's page served this run's spill")
	}
}

// TestEscaped: a judge's text, a brief, a check and a job's ask holding
// markup reach the page as text. Control: the raw payload would be there
// unescaped if a template did not escape it.
func TestEscaped(t *testing.T) {
	base, token, _ := start(t)
	c := client(t)
	get(t, c, base+"/?token="+token)
	for _, u := range []string{"/run/run-0002", "/fleet"} {
		_, body := get(t, c, base+u)
		if strings.Contains(body, "<script>document") || strings.Contains(body, "<img src=x") {
			t.Errorf("%s holds the payload unescaped", u)
		}
		if !strings.Contains(body, "&lt;script&gt;document.title=") {
			t.Errorf("%s does not show the payload as text", u)
		}
	}
}

// TestRunsNewestFirstAndFiltered: the runs page lists newest first with
// ask, cost and rounds; an outcome filter that matches nothing lists none.
func TestRunsNewestFirstAndFiltered(t *testing.T) {
	base, token, _ := start(t)
	c := client(t)
	_, body := get(t, c, base+"/?token="+token)
	i2, i0 := strings.Index(body, "run-0002"), strings.Index(body, "run-0000")
	if i2 < 0 || i0 < 0 || i2 > i0 || !strings.Contains(body, "ASK-2") || !strings.Contains(body, "$0.1300") {
		t.Errorf("runs page:\n%s", body)
	}
	if _, body := get(t, c, base+"/?outcome="+url.QueryEscape("not yet")); strings.Contains(body, "run-0002") {
		t.Errorf("the not-yet filter lists achieved runs")
	}
}

// BenchmarkRunsPage is the runs page of a workspace with 1,000 runs,
// server time (issue 34: at most 300 ms).
func BenchmarkRunsPage(b *testing.B) {
	runDir, _ := fixture(b, 1000)
	s, err := New(Options{RunDir: runDir, Reader: testReader(runDir), Token: "t"})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.AddCookie(&http.Cookie{Name: cookieName, Value: "t"})
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != 200 || !strings.Contains(w.Body.String(), "run-0999") {
			b.Fatalf("%d", w.Code)
		}
	}
}

// TestTamperedAndDeadLettered: a run whose record fails Verify is shown as
// tampered (control: one that passes is not); a discarded job shows its
// last error as the dead-letter reason and offers re-queue, not cancel.
func TestTamperedAndDeadLettered(t *testing.T) {
	runDir, _ := fixture(t, 2)
	rd := testReader(runDir)
	rd.Verify = func(dir, run string) error {
		if run == "run-0001" {
			return errors.New("CHAIN-BROKEN at line 3")
		}
		return nil
	}
	q := &deadQueue{}
	s, err := New(Options{RunDir: runDir, Reader: rd, Queue: q, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	page := func(u string) string {
		req := httptest.NewRequest(http.MethodGet, u, nil)
		req.AddCookie(&http.Cookie{Name: cookieName, Value: "t"})
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		return w.Body.String()
	}
	if body := page("/run/run-0001"); !strings.Contains(body, `id="tampered"`) || !strings.Contains(body, "CHAIN-BROKEN at line 3") {
		t.Errorf("the tampered run is not shown so")
	}
	if body := page("/run/run-0000"); strings.Contains(body, `id="tampered"`) {
		t.Errorf("control: an intact run is shown tampered")
	}
	body := page("/fleet")
	if !strings.Contains(body, "dead-lettered: attempt 5: LAST-ERROR") || !strings.Contains(body, "/fleet/9/retry") || strings.Contains(body, "/fleet/9/cancel") {
		t.Errorf("fleet page:\n%s", body)
	}
}

// deadQueue holds one discarded job.
type deadQueue struct{ fakeQueue }

func (q *deadQueue) List(context.Context) ([]fleet.Job, error) {
	return []fleet.Job{{ID: 9, State: "discarded", Ask: "DEAD", MaxAttempts: 5, Attempt: 5, Errors: []string{"attempt 4: x", "attempt 5: LAST-ERROR"}}}, nil
}

// TestGoalChangedWarns: a goal file that no longer holds the frozen goal
// is flagged beside its frozen hash; the frozen text itself is not.
func TestGoalChangedWarns(t *testing.T) {
	for _, tt := range []struct {
		name    string
		onDisk  string
		warning bool
	}{{"changed", "# 目标\nFORGED\n", true}, {"control: the frozen text", "# 目标\nREAL\n", false}} {
		t.Run(tt.name, func(t *testing.T) {
			runDir, ws := fixture(t, 1)
			goal := filepath.Join(ws, ".flower", "notes", "目标.md")
			os.WriteFile(goal, []byte(tt.onDisk), 0o600)
			sum := sha256.Sum256([]byte("# 目标\nREAL\n"))
			ev, _ := json.Marshal(harness.Event{Kind: "goal", Step: "设定目标", Time: time.Now(),
				Data: map[string]any{"state": "frozen", "path": goal, "sha256": hex.EncodeToString(sum[:])}})
			f, _ := os.OpenFile(filepath.Join(runDir, "run-0000", "events.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
			f.Write(append(ev, '\n'))
			f.Close()
			s, _ := New(Options{RunDir: runDir, Reader: testReader(runDir), Token: "t"})
			req := httptest.NewRequest(http.MethodGet, "/run/run-0000", nil)
			req.AddCookie(&http.Cookie{Name: cookieName, Value: "t"})
			w := httptest.NewRecorder()
			s.ServeHTTP(w, req)
			if got := strings.Contains(w.Body.String(), `id="goal-changed"`); got != tt.warning {
				t.Errorf("warning shown %v, want %v\n%s", got, tt.warning, w.Body.String())
			}
		})
	}
}

// TestLiveStream: a live run's stream sends each event written after
// ?from (none before it), carries the status line, and ends with "end"
// once the run is no longer under way. Control: with from=0 the earlier
// events are sent too.
func TestLiveStream(t *testing.T) {
	runDir, _ := fixture(t, 1)
	path := filepath.Join(runDir, "run-0000", "events.jsonl")
	st, _ := os.Stat(path)
	rows, _ := harness.ReadManifest(filepath.Join(runDir, "manifest.json"))
	var live atomic.Bool // read by the server's stream, set by the test
	rd := testReader(runDir)
	rd.Rows = func(context.Context) ([]harness.ManifestRow, error) {
		r := rows[0]
		if live.Load() {
			r.Running = []harness.RunningStep{{Step: "执行-评审#2", PID: os.Getpid()}}
		}
		return []harness.ManifestRow{r}, nil
	}
	s, _ := New(Options{RunDir: runDir, Reader: rd, Token: "t", Poll: time.Millisecond})
	ts := httptest.NewServer(s)
	defer ts.Close()
	for _, tt := range []struct {
		from        int64
		wantEarlier bool
	}{{st.Size(), false}, {0, true}} {
		live.Store(true)
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/run/run-0000/live?from=%d", ts.URL, tt.from), nil)
		req.AddCookie(&http.Cookie{Name: cookieName, Value: "t"})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(harness.Event{Kind: "step_start", Step: "执行-评审#2", Time: time.Now()})
		f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		f.Write(append(b, '\n'))
		f.Close()
		rd := bufio.NewReader(resp.Body)
		var got []string
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				break
			}
			if strings.HasPrefix(line, "data: ") {
				got = append(got, line)
				if strings.Contains(line, `"step_start"`) {
					live.Store(false) // the flow ends: the stream must say so and stop
				}
			}
		}
		resp.Body.Close()
		all := strings.Join(got, "")
		if !strings.Contains(all, `"kind":"step_start"`) || !strings.Contains(all, `"kind":"end"`) || !strings.Contains(all, "running") {
			t.Errorf("from %d: stream %q", tt.from, all)
		}
		if earlier := strings.Contains(all, `"kind":"guard"`); earlier != tt.wantEarlier {
			t.Errorf("from %d: sent the earlier events %v, want %v", tt.from, earlier, tt.wantEarlier)
		}
	}
}

// TestTell: the tell form's POST reaches Reader.Tell only with the token
// and this page's Origin (control: with both it does) and goes back to the
// run's page saying where the message landed.
func TestTell(t *testing.T) {
	runDir, _ := fixture(t, 1)
	rd := testReader(runDir)
	var told []string
	rd.Tell = func(_ context.Context, ws, msg string) (string, error) {
		told = append(told, msg)
		return "执行", nil
	}
	s, _ := New(Options{RunDir: runDir, Reader: rd, Token: "t"})
	post := func(cookie bool, origin string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/run/run-0000/tell", strings.NewReader("message=HELLO"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if cookie {
			req.AddCookie(&http.Cookie{Name: cookieName, Value: "t"})
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		return w
	}
	if post(false, "http://example.com").Code != http.StatusForbidden || post(true, "http://evil.example").Code != http.StatusForbidden || len(told) != 0 {
		t.Fatalf("a tell without the token or from another origin got through: %v", told)
	}
	w := post(true, "http://example.com") // httptest's Host
	if w.Code != http.StatusSeeOther || len(told) != 1 || told[0] != "HELLO" || !strings.Contains(w.Header().Get("Location"), "/run/run-0000?msg=told") {
		t.Errorf("tell: %d %q, told %v", w.Code, w.Header().Get("Location"), told)
	}
}

// Documents are rendered as Markdown, and markup in them stays inert
// (goldmark's safe defaults: raw HTML left out, javascript: links not
// rendered). Control: a plain heading does become a heading.
func TestMarkdownIsInert(t *testing.T) {
	got := string(markdown("## 目标\n写 hello.txt <script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n[x](javascript:alert(1))\n"))
	for _, bad := range []string{"<script", "<img", "javascript:"} {
		if strings.Contains(got, bad) {
			t.Errorf("rendered document holds %q:\n%s", bad, got)
		}
	}
	if !strings.Contains(got, "<h2>目标</h2>") {
		t.Errorf("control: no heading rendered:\n%s", got)
	}
}
