package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	flower "github.com/flowerhq/flower"
	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/internal/selftestmark"
	"github.com/flowerhq/flower/scripted"
)

// canaryScript drives the guard self-test: the main thread tries a writing
// Bash command (the delegate guard must deny it), then sends a worker whose
// identical kind of command must run.
const canaryScript = `{"conversations":[
 {"name":"canary-sub","match":{"first_user":"FLOWER-CANARY-SUBTASK"},"replies":[
   {"tool_use":{"name":"Bash","input":{"command":"touch flower-canary-sub","description":"canary"}}},
   {"text":"canary sub done"}]},
 {"name":"canary-main","match":{"first_user":"FLOWER-CANARY-MAIN"},"replies":[
   {"tool_use":{"name":"Bash","input":{"command":"touch flower-canary-main","description":"canary"}}},
   {"tool_use":{"name":"Agent","input":{"description":"canary","prompt":"FLOWER-CANARY-SUBTASK","subagent_type":"worker","run_in_background":false}}},
   {"text":"canary done"}]}]}`

// ErrSelfTest is wrapped by GuardSelfTest's failures.
var ErrSelfTest = errors.New("guard self-test failed")

// GuardSelfTest runs a canary step against a built-in scripted model, in a
// temporary workspace and HOME, with the claude and flower-hook this
// installation would use: a main-thread Bash must be denied by the delegate
// guard and a subagent's Bash must pass. It proves that the guard chain
// (settings.json → flower-hook → deny reaches the model) works here, before
// any real spend. claude and hook may be empty (located as usual).
func GuardSelfTest(ctx context.Context, claude, hook string) error {
	script, err := scripted.Parse([]byte(canaryScript))
	if err != nil {
		return err
	}
	if err := holdCanary(script, os.Getenv("FLOWER_SELFTEST_DELAY")); err != nil {
		return err
	}
	model, err := scripted.Start(script, "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer model.Close()
	if err := checkTempDir(os.Getenv("TMPDIR")); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "flower-selftest-")
	if err != nil {
		return fmt.Errorf("flower: self-test: %w", err)
	}
	defer os.RemoveAll(tmp)
	ws, home := filepath.Join(tmp, "ws"), filepath.Join(tmp, "home")
	for _, d := range []string{ws, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("flower: self-test: %w", err)
		}
	}
	o := harness.NewOptions(ws)
	flower.Defaults(&o)
	o.RunDir = filepath.Join(tmp, "runs")
	o.Claude, o.HookPath = claude, hook
	// claude's own temp folders (claude-<uid>, cc-socks) go with ours.
	o.Env = append(scripted.OfflineEnv(os.Environ(), home, model.URL()), "TMPDIR="+tmp)
	o.Resilience = harness.Resilience{}
	// The delegate guard comes with a workbench's hooks.
	o.Workbench = harness.RunDirWorkbench(ws, o.RunDir)
	rt, err := harness.New(ctx, o)
	if ctx.Err() != nil {
		return selfTestInterrupted(ctx)
	}
	if err != nil {
		return err
	}
	defer rt.Close()

	spec := harness.NewAgentSpec("canary", "You are the flower guard canary.")
	spec.AllowedTools = []string{"Agent", "Bash", "Read"}
	spec.DelegateOnly = true
	spec.Agents = map[string]harness.AgentDefinition{"worker": {Description: "canary worker", Prompt: "You are the canary worker.", Tools: []string{"Bash"}}}
	var denied bool
	res, err := rt.Run(ctx, spec, "FLOWER-CANARY-MAIN", harness.RunOptions{OnEvent: func(e harness.Event) {
		if g, ok := e.Guard(); ok && g.Denied() {
			denied = true
		}
	}})
	if ctx.Err() != nil {
		// Interrupted: the canary says nothing about the guards.
		return selfTestInterrupted(ctx)
	}
	if err != nil {
		return err
	}
	var problems []string
	if !res.OK {
		problems = append(problems, "the canary step failed: "+res.Error)
	}
	if _, err := os.Stat(filepath.Join(ws, "flower-canary-main")); err == nil {
		problems = append(problems, "the main thread's Bash ran (the delegate guard did not deny it)")
	}
	if _, err := os.Stat(filepath.Join(ws, "flower-canary-sub")); err != nil {
		problems = append(problems, "the subagent's Bash did not run")
	}
	reqs := model.RequestsFor("canary-main")
	if len(reqs) < 2 {
		problems = append(problems, fmt.Sprintf("the model saw %d main-thread requests, want at least 2 (the denied Bash, then its result)", len(reqs)))
	} else if tr := reqs[1].ToolResults(); len(tr) != 1 || !tr[0].IsError || !strings.Contains(tr[0].Content, "Agent") {
		problems = append(problems, "the model was not told to delegate after the denial")
	}
	if !denied {
		problems = append(problems, "no guard report reached the runtime's socket")
	}
	if len(problems) > 0 {
		return fmt.Errorf("flower: %w: %s", ErrSelfTest, strings.Join(problems, "; "))
	}
	return nil
}

// errSelfTestStops is the one line of a run that a failed self-test
// stopped: what failed (without the self-test's own "flower: ", which the
// line starts with already) and the ways on.
func errSelfTestStops(err error) error {
	var te *tempDirError
	if errors.As(err, &te) {
		return err // not the guards: the machine's temp folder
	}
	return &selfTestStop{err}
}

// tempDirError is a TMPDIR that names no directory: said as such, not as
// guards that would not hold.
type tempDirError struct{ dir string }

func (e *tempDirError) Error() string {
	return fmt.Sprintf("TMPDIR=%s is not a directory: create it, or point TMPDIR at one (flower and claude keep their temporary files there)", e.dir)
}

// checkTempDir checks the TMPDIR value dir ("" is the system's default).
func checkTempDir(dir string) error {
	if dir == "" {
		return nil
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return &tempDirError{dir: dir}
	}
	return nil
}

type selfTestStop struct{ err error }

func (e *selfTestStop) Error() string {
	return strings.TrimPrefix(e.err.Error(), "flower: ") + " (the guards would not hold: `flower doctor` shows details; --no-self-test starts anyway)"
}

func (e *selfTestStop) Unwrap() error { return e.err }

// selfTestCancel is the error of a self-test whose context was cancelled
// (a signal, a closed stdout): it wraps context.Canceled (exit 130, with a
// message of its own: interruptedMessage), never a failure of the guards.
type selfTestCancel struct{ cause error }

func (e *selfTestCancel) Error() string {
	why := strings.TrimSpace(strings.TrimPrefix(e.cause.Error(), context.Canceled.Error()))
	if why == "" {
		return "the guard self-test was interrupted"
	}
	return "the guard self-test was interrupted " + strings.Trim(why, ": ")
}

func (e *selfTestCancel) Unwrap() error { return e.cause }

// selfTestInterrupted is the error of a self-test whose context ended: a
// cancel is a selfTestCancel naming its cause; a deadline stays a deadline.
func selfTestInterrupted(ctx context.Context) error {
	cause := context.Cause(ctx)
	if errors.Is(cause, context.DeadlineExceeded) {
		return fmt.Errorf("self-test: %w", cause)
	}
	if !errors.Is(cause, context.Canceled) {
		cause = fmt.Errorf("%w (%v)", context.Canceled, cause)
	}
	return &selfTestCancel{cause: cause}
}

// holdCanary delays the canary's first answer by delay (a Go duration,
// FLOWER_SELFTEST_DELAY; empty: none), so that a test can signal flower
// while the canary step runs.
func holdCanary(script *scripted.Script, delay string) error {
	if delay == "" {
		return nil
	}
	d, err := time.ParseDuration(delay)
	if err != nil || d < 0 {
		return fmt.Errorf("FLOWER_SELFTEST_DELAY=%q is not a duration like 20s", delay)
	}
	for i := range script.Conversations {
		if c := &script.Conversations[i]; c.Name == "canary-main" {
			c.Replies[0].DelayMS = int(d.Milliseconds())
		}
	}
	return nil
}

// selfTestKey identifies this claude and flower-hook (paths, sizes, times:
// selftestmark.Key).
func selfTestKey(o harness.Options, getenv func(string) string) (claude, hook, key string, err error) {
	if claude, err = harness.FindClaude(o.Claude, getenv); err != nil {
		return "", "", "", err
	}
	if hook, err = harness.FindHook(o.HookPath); err != nil {
		return "", "", "", err
	}
	if key, err = selftestmark.Key(claude, hook); err != nil {
		return "", "", "", err
	}
	return claude, hook, key, nil
}

// selfTestOnce runs the guard self-test unless this claude and flower-hook
// already passed it in this run dir. It writes nothing: stampSelfTest
// records the pass once the run dir is prepared.
func selfTestOnce(ctx context.Context, e *cmdEnv, o harness.Options) error {
	claude, hook, key, err := selfTestKey(o, e.Getenv)
	if err != nil {
		return err
	}
	if selftestmark.Holds(o.RunDir, key) {
		return nil
	}
	return e.SelfTest(ctx, claude, hook)
}

// stampSelfTest records a passed self-test in the (existing) run dir.
func stampSelfTest(o harness.Options, getenv func(string) string) {
	if _, _, key, err := selfTestKey(o, getenv); err == nil {
		selftestmark.Write(o.RunDir, key)
	}
}
