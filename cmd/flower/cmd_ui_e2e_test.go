package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/internal/demo"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/pgtest"
	"github.com/flowerhq/flower/testkit/testbed"
)

// The payloads of the ui tests: markup in a judge's text and in a file
// name (the workspace's) that must stay text.
const (
	uiJudgeXSS = `<script>document.title="pwned-judge"</script>`
	uiFileXSS  = `ws <img src=x onerror=document.title=1>`
)

// uiBrowser starts a headless Chromium of its own (an empty profile, no
// network of its own) through testbed.Command and returns a chromedp
// context on it.
func uiBrowser(t *testing.T) context.Context {
	t.Helper()
	chromium := testbed.RequireTool(t, "chromium", "the flower ui tests drive a real browser; scripts/test.sh installs it")
	dir := t.TempDir()
	cmd := testbed.Command(t, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir="+dir,
		"--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "--window-size=1280,1000", "about:blank")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var ws string
	testbed.Await(t, "chromium's DevToolsActivePort", func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort"))
		f := strings.Fields(string(b))
		if err != nil || len(f) < 2 {
			return false
		}
		ws = "ws://127.0.0.1:" + f[0] + f[1]
		return true
	})
	alloc, cancel := remote.NewAllocator(testbed.Context(t), ws, remote.NoModifyURL)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	return ctx
}

// startUI starts `flower ui args…` and returns its base URL and the URL
// with the token it printed.
func startUI(t *testing.T, env []string, args ...string) (base, withToken string) {
	t.Helper()
	cmd := testbed.Command(t, testbed.BuildBinary(t, "./cmd/flower"), append([]string{"ui"}, args...)...)
	cmd.Env, cmd.Dir = env, t.TempDir()
	out, stderr := testbed.Start(t, cmd)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("flower ui printed no URL: %v\n%s", err, stderr)
	}
	withToken = strings.TrimSpace(strings.TrimPrefix(line, "flower ui: "))
	base, _, ok := strings.Cut(withToken, "/?token=")
	if !ok {
		t.Fatalf("flower ui printed %q, want a URL with ?token=", line)
	}
	return base, withToken
}

// followed is the stdout of a command the test reads while it runs.
type followed struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (f *followed) String() string { f.mu.Lock(); defer f.mu.Unlock(); return f.buf.String() }

// follow starts `flower args…` and collects its stdout as it comes.
func follow(t *testing.T, env []string, args ...string) (*exec.Cmd, *followed) {
	t.Helper()
	cmd := testbed.Command(t, testbed.BuildBinary(t, "./cmd/flower"), args...)
	cmd.Env, cmd.Dir = env, t.TempDir()
	out, _ := testbed.Start(t, cmd)
	f := &followed{}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f.mu.Lock()
			f.buf.WriteString(sc.Text() + "\n")
			f.mu.Unlock()
		}
	}()
	return cmd, f
}

// shot saves the page as a PNG test artifact (in $FLOWER_ARTIFACTS, else
// the temp folder's flower-ui-screenshots) and logs where.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	// A loaded machine's Chromium can be between layouts (a body the page
	// just replaced: "Cannot take screenshot with 0 width"): await a laid
	// out page, and try again a few times.
	await(t, ctx, `document.body && document.documentElement.clientWidth > 0 && document.body.scrollWidth > 0`)
	var png []byte
	var err error
	testbed.Eventually(30*time.Second, func() bool {
		png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
		return err == nil
	})
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dir := os.Getenv("FLOWER_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "flower-ui-screenshots")
	}
	os.MkdirAll(dir, 0o755)
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// js evaluates expr in the page (a promise's value when it gives one).
func js[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// await polls expr in the page until it is truthy (a navigation under
// way ends one poll; the next one runs in the new page).
func await(t *testing.T, ctx context.Context, expr string) {
	t.Helper()
	var err error
	if !testbed.Eventually(3*time.Minute, func() bool {
		_, err = chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(20*time.Second), chromedp.WithPollingInterval(50*time.Millisecond)))
		return err == nil
	}) {
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + (document.body ? document.body.innerText : "")`))
		t.Fatalf("awaiting %s: %v\nthe page: %s", expr, err, body)
	}
}

func navigate(t *testing.T, ctx context.Context, u string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(u)); err != nil {
		t.Fatalf("navigate %s: %v", u, err)
	}
}

// text is the text content of the elements sel matches, joined.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	b, _ := json.Marshal(sel)
	return js[string](t, ctx, `Array.from(document.querySelectorAll(`+string(b)+`)).map(e => e.textContent).join("\n")`)
}

// uiFlowScript is the demo's flow (a denial, a spill, a judge that says
// not yet and then achieved), its first verdict carrying markup.
func uiFlowScript(ws string) *scripted.Script {
	s := demoScript(ws)
	for i, c := range s.Conversations {
		if c.Name == "judge" {
			s.Conversations[i].Replies[0].Text = strings.Replace(c.Replies[0].Text, "numbers.txt 还没有核对行数", "numbers.txt 还没有核对行数 "+uiJudgeXSS, 1)
		}
	}
	return s
}

// TestE2E_UIFinishedFlow (issue 34): `flower ui` over a finished starter
// flow shows in a real browser what the run dir holds — outcome, costs,
// the judge's checks, a denial, a spill link that opens, the brief — while
// markup in a judge's text and in a file name stays text and a ../ spill
// link is refused. The typed checks are the judge's own (its verdict
// events, as the demo script's judge gives them).
func TestE2E_UIFinishedFlow(t *testing.T) {
	t.Parallel()
	var ws string
	bed := testbed.NewFor(t, func(root string) *scripted.Script {
		ws = filepath.Join(root, uiFileXSS)
		return uiFlowScript(ws)
	})
	os.MkdirAll(ws, 0o755)
	runDir := filepath.Join(t.TempDir(), "runs")
	answers := filepath.Join(t.TempDir(), "answers.txt")
	os.WriteFile(answers, []byte(demo.Answer+"\n"), 0o600)
	flowerbin.MarkSelfTested(t, runDir, bed.Claude)
	cmd := testbed.Command(t, testbed.BuildBinary(t, "./cmd/flower"), "--json", "--timeout", "0", "--answers", answers, "--run-dir", runDir, "-C", ws, "写 hello.txt 和 numbers.txt")
	cmd.Env, cmd.Dir = flowerbin.Env(t, bed.Env(), bed.Claude), t.TempDir()
	if out, stderr, code := testbed.Exec(t, cmd); code != 0 {
		t.Fatalf("flower: exit %d\n%s\n%s", code, stderr, flowerbin.Tail([]byte(out)))
	}
	rows, err := harness.ReadManifest(filepath.Join(runDir, "manifest.json"))
	if err != nil || len(rows) != 1 {
		t.Fatalf("manifest: %v %v", rows, err)
	}
	row := rows[0]
	var cost float64
	for _, r := range row.Results {
		cost += r.CostUSD
	}
	_, withToken := startUI(t, os.Environ(), "--run-dir", runDir)
	ctx := uiBrowser(t)
	navigate(t, ctx, withToken)
	if got := text(t, ctx, "#runs .outcome"); got != "achieved" {
		t.Errorf("runs page outcome = %q", got)
	}
	if got := text(t, ctx, "#runs .ws"); got != ws || js[int](t, ctx, `document.querySelectorAll("img").length`) != 0 {
		t.Errorf("the workspace's name %q did not stay text: %q", ws, got)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#runs .run a"))); err != nil {
		t.Fatal(err)
	}
	// Every judge round on the page before it is read: on a loaded machine
	// the page was once read with round 1's checks only (the screenshot
	// right after showed both). Why is not known; whether the page took
	// the finished run as live is logged for the next time.
	judges := 0
	for _, r := range row.Results {
		if strings.Contains(r.Step, "-评审") {
			judges++
		}
	}
	await(t, ctx, fmt.Sprintf(`document.getElementById("steps") && document.querySelectorAll(".judge .checks").length == %d`, judges))
	t.Logf("the run page took the finished run as live: %v", js[bool](t, ctx, `!!document.getElementById("run").dataset.live`))
	checkRunPage(t, ctx, row, cost)
	shot(t, ctx, "ui-finished-flow")

	// The spill link opens the spilled text; ../ in a spill link is refused.
	spill := js[string](t, ctx, `document.querySelector("#spills a.spill-link").href`)
	for _, bad := range []string{"..%2F..%2Fhello.txt", "..%2F" + url0(filepath.Base(ws)) + "%2Fhello.txt"} {
		u := spill[:strings.LastIndex(spill, "/")+1] + bad
		if code := js[int](t, ctx, `fetch(`+jsString(u)+`).then(r => r.status)`); code != 403 {
			t.Errorf("spill link %s: status %d, want 403", u, code)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#spills a.spill-link"))); err != nil {
		t.Fatal(err)
	}
	await(t, ctx, `document.body && document.body.innerText.includes("2000")`)
	if loc := js[string](t, ctx, `location.href`); loc != spill {
		t.Errorf("the spill link led to %s, want %s", loc, spill)
	}
}

func jsString(s string) string { b, _ := json.Marshal(s); return string(b) }

func url0(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, " ", "%20"), "=", "%3D") }

// checkRunPage asserts the one-run page of the finished flow.
func checkRunPage(t *testing.T, ctx context.Context, row harness.ManifestRow, cost float64) {
	t.Helper()
	for sel, want := range map[string]string{
		"#outcome":                        "achieved",
		"#total-cost":                     fmt.Sprintf("$%.4f", cost),
		"#step-count":                     fmt.Sprint(len(row.Results)),
		"#denials .denial":                "Write",
		".judge .checks td.evidence":      "wc -l numbers.txt: 2000",
		".judge .checks tr.pass td.check": "numbers.txt 有 2000 行",
		".judge .failed li":               "numbers.txt 有 2000 行", // round 1's failed list
		"#brief .doc":                     "hello.txt",
		"li[data-step='执行-评审#1'] .verdict-md": uiJudgeXSS,
	} {
		if got := text(t, ctx, sel); !strings.Contains(got, want) {
			t.Errorf("%s = %q, want it to hold %q", sel, got, want)
		}
	}
	if got := text(t, ctx, "#denials .denial"); !strings.Contains(got, "delegate") {
		t.Errorf("the denial names no guard: %q", got)
	}
	if n := js[int](t, ctx, `document.querySelectorAll("#runbody script, img").length`); n != 0 {
		t.Errorf("%d script or img elements came from the record's text", n)
	}
	if title := js[string](t, ctx, `document.title`); strings.Contains(title, "pwned") || title == "1" {
		t.Errorf("a payload ran: the title is %q", title)
	}
}

// uiLiveScript is a quick starter flow whose coordinator holds its first
// reply until release is closed.
func uiLiveScript(release <-chan struct{}) func(string) *scripted.Script {
	return func(string) *scripted.Script {
		return &scripted.Script{Conversations: []scripted.Conversation{
			{Name: "clarify", Match: scripted.Match{Role: "clarify"}, Func: func(scripted.Request) scripted.Reply { return scripted.Reply{Text: flowerbin.DemoBrief} }},
			{Name: "goal", Match: scripted.Match{Role: "goal"}, Func: func(scripted.Request) scripted.Reply { return flowerbin.TypedGoal(flowerbin.DemoGoal) }},
			{Name: "judge", Match: scripted.Match{Role: "judge"}, Func: func(r scripted.Request) scripted.Reply {
				return flowerbin.TypedJudge(r.FirstUser(), flowerbin.DemoAchieved)
			}},
			{Name: "coordinator", Match: scripted.Match{Role: "coordinator"}, Func: func(scripted.Request) scripted.Reply {
				<-release
				return scripted.Reply{Text: "两个文件都写好了。"}
			}},
		}}
	}
}

// TestE2E_UIFollowsARunningFlow (issue 34): the page of a running flow
// gains its next step without a reload (server-sent events over
// events.jsonl), and when the flow ends the stream says so and stops.
func TestE2E_UIFollowsARunningFlow(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	bed := testbed.NewFor(t, uiLiveScript(release))
	runDir := filepath.Join(t.TempDir(), "runs")
	flowerbin.MarkSelfTested(t, runDir, bed.Claude)
	cmd := testbed.Command(t, testbed.BuildBinary(t, "./cmd/flower"), "--json", "--timeout", "0", "--run-dir", runDir, "-C", bed.Workspace, "写 hello.txt")
	cmd.Env, cmd.Dir = flowerbin.Env(t, bed.Env(), bed.Claude), t.TempDir()
	testbed.Start(t, cmd)
	var run string
	testbed.Await(t, "the work step under way", func() bool {
		rows, _ := harness.ReadManifest(filepath.Join(runDir, "manifest.json"))
		if len(rows) == 1 && len(rows[0].Running) == 1 && rows[0].Running[0].Step == "执行" {
			run = rows[0].Run
			return true
		}
		return false
	})
	watch, watched := follow(t, os.Environ(), "runs", "show", "--watch", "--run-dir", runDir, run)
	base, withToken := startUI(t, os.Environ(), "--run-dir", runDir)
	ctx := uiBrowser(t)
	navigate(t, ctx, withToken)
	navigate(t, ctx, base+"/run/"+run)
	await(t, ctx, `document.querySelector("li.step.running[data-step='执行']")`)
	if n := js[int](t, ctx, `document.querySelectorAll("li[data-step='执行-评审#1']").length`); n != 0 {
		t.Fatalf("the judge's step is there before the work ended") // control for the wait below
	}
	// A message told from the page reaches the flow's Q&A log (a POST with
	// the token and the page's Origin), and the page says where it landed.
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#tell input[name=message]"), "UI-TOLD-MESSAGE"),
		chromedp.Click(chromedp.CSS("#tell button"))); err != nil {
		t.Fatal(err)
	}
	await(t, ctx, `document.getElementById("msg") && document.getElementById("msg").textContent.startsWith("told")`)
	if qa := text(t, ctx, "#qa .doc"); !strings.Contains(qa, "UI-TOLD-MESSAGE") {
		t.Errorf("the told message is not in the Q&A log: %q", qa)
	}
	js[int](t, ctx, `window.__sameDocument = 34`)
	shot(t, ctx, "ui-running-flow")
	close(release)
	released = true
	await(t, ctx, `document.querySelector("li[data-step='执行-评审#1']")`)
	await(t, ctx, `document.getElementById("run").dataset.ended === "true" && document.getElementById("outcome").textContent === "achieved"`)
	if v := js[int](t, ctx, `window.__sameDocument || 0`); v != 34 {
		t.Errorf("the page was reloaded (marker %d): the step came by a reload, not the stream", v)
	}
	cmd.Wait()
	shot(t, ctx, "ui-running-flow-ended")

	// runs show --watch followed the same flow to its end, then stopped.
	if err := watch.Wait(); err != nil {
		t.Errorf("runs show --watch: %v\n%s", err, watched)
	}
	out := watched.String()
	for _, want := range []string{"watching " + run, "▶ review #1", "✓ review #1", "run " + run + " ended: achieved"} {
		if !strings.Contains(out, want) {
			t.Errorf("runs show --watch printed no %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "watching") > strings.Index(out, "▶ review #1") {
		t.Errorf("the judge's step was there before the watch began:\n%s", out) // it came by following
	}
}

// TestE2E_UIFleet (issue 34): with a PostgreSQL store the fleet page lists
// three queued flows; cancel works from the page (token cookie and this
// page's Origin) and is refused without the token; a cancelled job is
// re-queued from the page.
func TestE2E_UIFleet(t *testing.T) {
	t.Parallel()
	flowerbin.SkipShort(t, "it runs flower queue and flower ui on PostgreSQL")
	store := pgtest.URL(t)
	flower := testbed.BuildBinary(t, "./cmd/flower")
	env := append(os.Environ(), "FLOWER_STORE="+store, "HOME="+t.TempDir())
	shared := t.TempDir()
	var ids []string
	for i := range 3 {
		cmd := testbed.Command(t, flower, "queue", "add", "--workspace", shared, fmt.Sprintf("FLEET-ASK-%d", i))
		cmd.Env = env
		out, stderr, code := testbed.Exec(t, cmd)
		if code != 0 {
			t.Fatalf("queue add: %s", stderr)
		}
		ids = append(ids, strings.TrimSpace(out))
	}
	state := func(id string) string {
		cmd := testbed.Command(t, flower, "queue", "show", "--json", id)
		cmd.Env = env
		out, stderr, _ := testbed.Exec(t, cmd)
		var j struct{ State string }
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatalf("queue show %s: %v\n%s", id, err, stderr)
		}
		return j.State
	}
	_, watched := follow(t, env, "queue", "ls", "--watch")
	base, withToken := startUI(t, env, "-C", shared)
	ctx := uiBrowser(t)
	navigate(t, ctx, withToken)
	navigate(t, ctx, base+"/fleet")
	if n := js[int](t, ctx, `document.querySelectorAll("#jobs tr.job").length`); n != 3 || !strings.Contains(text(t, ctx, "#jobs .ask"), "FLEET-ASK-2") {
		t.Fatalf("fleet page lists %d jobs: %q", n, text(t, ctx, "#jobs"))
	}

	// Without the token: a browser with no cookie is refused, the page and
	// a POST from its own origin alike; the job stays queued.
	anon, cancel := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
	defer cancel()
	navigate(t, anon, base+"/fleet")
	if body := text(t, anon, "body"); !strings.Contains(body, "no valid token") {
		t.Errorf("the fleet page without the token: %q", body)
	}
	if code := js[int](t, anon, `fetch("/fleet/`+ids[0]+`/cancel", {method: "POST"}).then(r => r.status)`); code != 403 {
		t.Errorf("cancel without the token: %d, want 403", code)
	}
	if s := state(ids[0]); s != "available" {
		t.Fatalf("job %s is %s after a refused cancel", ids[0], s)
	}

	// With it: the page's button cancels (control), then re-queues.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`form[action="/fleet/`+ids[0]+`/cancel"] button`))); err != nil {
		t.Fatal(err)
	}
	await(t, ctx, `document.querySelector("tr.job[data-job='`+ids[0]+`'][data-state='cancelled']")`)
	if s := state(ids[0]); s != "cancelled" {
		t.Errorf("job %s is %s after cancel, want cancelled", ids[0], s)
	}
	testbed.Await(t, "queue ls --watch printing the cancel", func() bool {
		return strings.Contains(watched.String(), fmt.Sprintf("%-6s %-10s", ids[0], "cancelled"))
	})
	shot(t, ctx, "ui-fleet")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`form[action="/fleet/`+ids[0]+`/retry"] button`))); err != nil {
		t.Fatal(err)
	}
	await(t, ctx, `document.querySelector("tr.job[data-job='`+ids[0]+`'][data-state='available']")`)
	if s := state(ids[0]); s != "available" {
		t.Errorf("job %s is %s after re-queue, want available", ids[0], s)
	}
}
