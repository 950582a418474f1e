package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/flowerhq/flower/internal/envlist"
	"github.com/flowerhq/flower/internal/redact"
)

// Class constants of the Runtime: the texts of its sentinel errors and the
// note an interrupted session is resumed with.
const (
	// Interrupted is the error of an attempt a human interrupted.
	Interrupted = "interrupted-by-human"
	// HandoffDue is the error of an attempt whose context reached
	// HandoffPolicy.At.
	HandoffDue = "context-full-handoff"
	// InterruptNote is appended to the human's words when an interrupted
	// session is resumed.
	InterruptNote = "(框架提示:你刚被上面这位人类打断了。打断那一刻正在执行、返回 interrupted 的工具调用," +
		"是打断的正常副作用,不是环境故障,不要去排查它。把人的话考虑进去,接着做。)"
	// handoffInterruptNote introduces a human's words that landed while
	// the previous session was handing off: the fresh session gets them
	// after the handoff's prompt block.
	handoffInterruptNote = "(框架提示:上一个会话交接时,人类插了一句话,原话如下。把它考虑进去,接着做。)"
)

// Runtime runs steps: one step = one claude process, with retries,
// interrupts and handoffs inside the one Run call.
type Runtime struct {
	opts      Options
	workspace string
	runDir    string
	run       string
	claude    string
	hook      string
	env       []string         // base child env
	allowDirs []string         // Options.AllowDirs, absolute
	configDir string           // portable config dir, "" when not portable
	project   string           // CLAUDE_CODE_PROJECT_DIR_NAME
	red       *redact.Redactor // the credentials of env, kept out of every file
	trusted   bool             // the person opted in to the workspace's API settings
	startMD   string           // the workspace's CLAUDE.md files when New ran
	events    *eventLog
	sock      *reportServer
	store     *storeSlot // nil: no session store
	row       *runRow    // this run's manifest row

	// The live steps, for interrupts and socket reports.
	mu       sync.Mutex
	active   map[*proc]struct{}
	sessions map[string]string // session id → step, for socket reports
	current  string
	onEvents map[string]func(Event)
	live     map[string]chan struct{} // live-report token → its attempt's wait
	// onSession is told every session id as soon as its system/init
	// arrives; see OnSession.
	onSession func(sessionID string)
}

// OnSession installs fn to be told each session id as soon as a step's
// system/init line names it, and returns a
// function that restores the previous watcher. flow's Workflow installs it
// around one Run call only.
func (r *Runtime) OnSession(fn func(sessionID string)) (restore func()) {
	r.mu.Lock()
	prev := r.onSession
	r.onSession = fn
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		r.onSession = prev
		r.mu.Unlock()
	}
}

// New builds a Runtime: loads <workspace>/.env (never overriding the
// environment), checks credentials (fails here, not at the first step),
// locates claude and flower-hook, prepares the store (it opens beside the
// first claude's start, with that step's context; a store that cannot open
// fails each step with a StartError, which is not retried), opens the
// events file and starts the report socket. ctx is not kept: nothing New
// starts runs on after it returns but the socket, which Close stops.
func New(ctx context.Context, o Options) (*Runtime, error) {
	if o.Workspace == "" {
		return nil, fmt.Errorf("harness: workspace is required")
	}
	ws, err := filepath.Abs(o.Workspace)
	if err != nil {
		return nil, fmt.Errorf("harness: workspace: %w", err)
	}
	if o.RunDir == "" {
		o.RunDir = "runs"
	}
	runDir, err := filepath.Abs(o.RunDir)
	if err != nil {
		return nil, fmt.Errorf("harness: run dir: %w", err)
	}
	o = withDefaults(o)
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	// The opt-in is read before .env: a workspace cannot opt itself in.
	trusted := o.TrustWorkspaceAPI && envlist.Getter(env)(TrustWorkspaceEnv) == "1"
	env = loadDotEnv(env, filepath.Join(ws, ".env"))
	getenv := envlist.Getter(env)
	if err := CheckCredentials(getenv); err != nil {
		return nil, err
	}
	if _, err := CheckAuthority(ws, getenv, trusted); err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	claude, err := FindClaude(o.Claude, getenv)
	if err != nil {
		return nil, err
	}
	hook, err := FindHook(o.HookPath)
	if err != nil {
		return nil, err
	}
	r := &Runtime{
		opts: o, workspace: ws, runDir: runDir, claude: claude, hook: hook,
		env: env, trusted: trusted, startMD: snapshotInstructions(ws), active: map[*proc]struct{}{},
		sessions: map[string]string{}, onEvents: map[string]func(Event){},
	}
	for _, d := range o.AllowDirs {
		a, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("harness: allow dir: %w", err)
		}
		r.allowDirs = append(r.allowDirs, a)
	}
	r.run = o.RunID
	if r.run == "" {
		r.run = NewRunID()
	}
	r.red = redact.FromEnv(env)
	r.row = &runRow{path: r.ManifestPath(), runDir: runDir, run: r.run, workspace: ws, started: unixNow(), red: r.red}
	if err := r.prepareDirs(getenv); err != nil {
		return nil, err
	}
	if err := r.open(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// prepareDirs makes the run's directory, the portable config dir (with the
// user's login copied in) and the workbench.
func (r *Runtime) prepareDirs(getenv func(string) string) error {
	if err := privateDir(r.runDir); err != nil {
		return fmt.Errorf("harness: run dir: %w", err)
	}
	if err := privateDir(filepath.Join(r.runDir, r.run)); err != nil {
		return fmt.Errorf("harness: run dir: %w", err)
	}
	if _, err := RecoverRunDir(r.runDir); err != nil {
		return err
	}
	if r.opts.Portable {
		r.configDir = filepath.Join(r.runDir, "claude-config")
		r.project = ProjectKey(r.workspace)
		if err := os.MkdirAll(r.configDir, 0o700); err != nil {
			return fmt.Errorf("harness: config dir: %w", err)
		}
		if err := r.copyCredentials(getenv); err != nil {
			return err
		}
	}
	wb := r.opts.Workbench
	if wb == nil {
		return nil
	}
	// Hook commands and prompts name the workbench: make it absolute.
	var err error
	if wb.Workspace, err = filepath.Abs(wb.Workspace); err != nil {
		return fmt.Errorf("harness: workbench: %w", err)
	}
	if wb.Home != "" {
		if wb.Home, err = filepath.Abs(wb.Home); err != nil {
			return fmt.Errorf("harness: workbench: %w", err)
		}
	}
	return wb.ensure()
}

// open prepares the session store slot (when one is wired in) and opens
// the events file and the report socket.
func (r *Runtime) open() error {
	r.store = newStoreSlot(r)
	var err error
	if r.events, err = openEventLog(r.EventsPath(), r.red); err != nil {
		return err
	}
	r.sock, err = startReportServer(r.onReport)
	return err
}

// copyCredentials puts the user's login into the portable config dir
// through Options.CopyCredentials; without one, a run that needs that login
// fails here with the fix named.
func (r *Runtime) copyCredentials(getenv func(string) string) error {
	from := UserConfigDir(getenv)
	if r.opts.CopyCredentials != nil {
		if err := r.opts.CopyCredentials(from, r.configDir); err != nil {
			return fmt.Errorf("harness: %w", err)
		}
		return nil
	}
	if envCredentials(getenv) {
		return nil
	}
	return fmt.Errorf("harness: %w: a portable run cannot use the login in %s without Options.CopyCredentials: "+
		"wire one in (flower.Defaults does), set ANTHROPIC_API_KEY, or turn Portable off", ErrNoCredentials, from)
}

// Close stops the socket (removing its directory) while it closes the
// events file and the store. It is idempotent.
func (r *Runtime) Close() error {
	var sock sync.WaitGroup
	if r.sock != nil {
		sock.Add(1)
		go func() {
			defer sock.Done()
			r.sock.Close()
		}()
	}
	defer sock.Wait()
	if r.events != nil {
		r.events.close()
	}
	return r.store.close()
}

// RunID is this Runtime's run id (its manifest row and events directory).
func (r *Runtime) RunID() string { return r.run }

// RunDir is the absolute run dir.
func (r *Runtime) RunDir() string { return r.runDir }

// Workspace is the absolute workspace.
func (r *Runtime) Workspace() string { return r.workspace }

// Claude is the located claude binary.
func (r *Runtime) Claude() string { return r.claude }

// Socket is the report socket's path (FLOWER_SOCKET of every child).
func (r *Runtime) Socket() string { return r.sock.Path() }

// Workbench is the Runtime's workbench, nil for none.
func (r *Runtime) Workbench() *Workbench { return r.opts.Workbench }

// Results are the StepResults of every finished Run, in order.
func (r *Runtime) Results() []StepResult { return r.row.finished() }

// ManifestPath is <run_dir>/manifest.json.
func (r *Runtime) ManifestPath() string { return filepath.Join(r.runDir, "manifest.json") }

// EventsPath is <run_dir>/<run>/events.jsonl.
func (r *Runtime) EventsPath() string { return filepath.Join(r.runDir, r.run, "events.jsonl") }

// Record appends an event the caller produced (the workflow's "step" and
// "task" events) to the run's events.jsonl, so the run's record holds it
// beside the events of the runs themselves. A zero Time is set to now.
func (r *Runtime) Record(ev Event) {
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	if r.events != nil {
		r.events.write(ev)
	}
}

// Interrupt stops every running step with the human's words: the CLI gets
// an interrupt control request on stdin, and the step resumes the same
// session with words + InterruptNote. It reports how many steps it reached.
func (r *Runtime) Interrupt(words string) int {
	r.mu.Lock()
	ps := make([]*proc, 0, len(r.active))
	for p := range r.active {
		ps = append(ps, p)
	}
	r.mu.Unlock()
	n := 0
	for _, p := range ps {
		if p.interrupt(words) == nil {
			n++
		}
	}
	return n
}

// onReport turns a flower-hook socket line into an Event of the step whose
// session it names (else the step running now).
func (r *Runtime) onReport(line []byte) {
	ev := reportEvent(line)
	sid, _ := ev.Data["session_id"].(string)
	r.mu.Lock()
	step := r.sessions[sid]
	if step == "" {
		step = r.current
	}
	cb := r.onEvents[step]
	r.mu.Unlock()
	ev.Step = step
	r.markLive(ev)
	r.events.write(ev)
	if cb != nil {
		cb(ev)
	}
}
