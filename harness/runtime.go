package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/joho/godotenv"

	"github.com/flowerhq/flower/internal/envlist"
	"github.com/flowerhq/flower/internal/lazyre"
	"github.com/flowerhq/flower/internal/linesock"
	"github.com/flowerhq/flower/internal/redact"
)

// Class constants of the seed's Runtime.
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
)

// ErrSessionLost is wrapped by a SessionStore's Materialize error when the
// session cannot be loaded because the store lost it (a damaged store was
// moved aside for a fresh one): the Runtime then starts the step's session
// fresh, and says so with a "store" event (fresh: true).
var ErrSessionLost = errors.New("the session store lost the session")

// SessionStore is what the Runtime needs of the session store: mirror every
// transcript_mirror line as it comes, and before a --resume write the
// loaded (expired, trimmed, pruned) transcript into configDir.
type SessionStore interface {
	Mirror(ctx context.Context, line []byte) error
	Materialize(ctx context.Context, projectKey, sessionID, configDir string) error
	Close() error
}

// checkpointer is a SessionStore that can settle its writes ahead of Close
// (SQLite's write-ahead log): the Runtime asks it to while a finished
// claude exits, so that closing after the last step is quick.
type checkpointer interface {
	Checkpoint(ctx context.Context) error
}

// checkpoint settles st's writes when it can; a store that cannot has
// nothing to settle.
func checkpoint(ctx context.Context, st SessionStore) error {
	if c, ok := st.(checkpointer); ok {
		return c.Checkpoint(ctx)
	}
	return nil
}

// StoreOptions are the Runtime's session-store policies (seed: trim,
// ephemeral, keep_denials) handed to Options.OpenStore.
type StoreOptions struct {
	Workspace   string
	Trim        bool
	Ephemeral   bool
	KeepDenials int
}

// Options configure a Runtime (seed Runtime keyword arguments plus what a
// Go process must say explicitly). NewOptions fills the seed's defaults;
// zero values of Resilience and Handoff mean "off", and zero fields of an
// enabled one take the defaults (window DefaultWindow(), 8 generations,
// 5 attempts, 2s..60s back-off).
type Options struct {
	Workspace string // required
	RunDir    string // default "runs" (relative to the current directory)
	RunID     string // default: a fresh time-stamped id
	// Portable runs every step with CLAUDE_CONFIG_DIR=<run_dir>/claude-config
	// and a fixed CLAUDE_CODE_PROJECT_DIR_NAME, mirroring into the store.
	Portable    bool
	Trim        bool
	Ephemeral   bool
	KeepDenials int
	// Workbench is nil for none; RunDirWorkbench gives the seed's
	// Runtime(workbench=True) placement. New makes its paths absolute.
	Workbench      *Workbench
	SpillThreshold int
	Resilience     Resilience
	Handoff        HandoffPolicy
	// Claude is an explicit claude path (--claude); see FindClaude.
	Claude string
	// HookPath is an explicit flower-hook path; see FindHook.
	HookPath string
	// PluginDir is passed as --plugin-dir when it is a directory.
	PluginDir string
	// CLIRetries caps the CLI's own API retries (CLAUDE_CODE_MAX_RETRIES)
	// so that Resilience owns the policy; negative leaves it unset.
	CLIRetries int
	// Env is the base environment; nil means os.Environ().
	Env []string
	// OpenStore opens the session store at path (<run_dir>/sessions.db).
	// harness links no store of its own: nil runs without one (no
	// mirroring; a resume reads the CLI's own files). The command wires
	// the seed's SQLite store in (batteries.Defaults, batteries.New).
	OpenStore func(ctx context.Context, path string, o StoreOptions) (SessionStore, error)
	// NoStore runs without a session store even when OpenStore is set.
	NoStore bool
	// CopyCredentials copies the user's login (fromConfigDir, the user's
	// claude config dir) into a portable run's config dir, refresh tokens
	// removed. nil copies nothing; New then refuses a portable run whose
	// only credentials are that login, rather than start steps that cannot
	// authenticate.
	CopyCredentials func(fromConfigDir, toConfigDir string) error
	// StartTimeout bounds the wait for system/init (default 60s).
	StartTimeout time.Duration
	// AllowDirs are folders outside the workspace and the workbench that
	// the steps' write tools may write to (the fence, hooks.Fence); each is
	// also given to claude as --add-dir. New makes them absolute.
	AllowDirs []string
}

// NewOptions returns the seed's defaults for workspace.
func NewOptions(workspace string) Options {
	return Options{
		Workspace: workspace, RunDir: "runs", Portable: true, Ephemeral: true, KeepDenials: 1,
		SpillThreshold: 4000, Resilience: NewResilience(), Handoff: NewHandoffPolicy(), CLIRetries: 1,
	}
}

// RunDirWorkbench is the workbench of Runtime(workbench=True):
// <run_dir>/workbench, outside the repository.
func RunDirWorkbench(workspace, runDir string) *Workbench {
	wb := NewWorkbench(workspace)
	wb.Home = filepath.Join(runDir, "workbench")
	return wb
}

// Runtime runs steps: one step = one claude process, with retries,
// interrupts and handoffs inside the one Run call (seed Runtime).
type Runtime struct {
	opts      Options
	workspace string
	runDir    string
	run       string
	claude    string
	hook      string
	env       []string       // base child env
	allowDirs []string       // Options.AllowDirs, absolute
	configDir string         // portable config dir, "" when not portable
	project   string         // CLAUDE_CODE_PROJECT_DIR_NAME
	store     *openingStore  // nil: no session store
	settled   sync.WaitGroup // checkpoints under way (Close waits)
	settleMu  sync.Mutex
	settling  bool // a checkpoint runs
	again     bool // and another was asked for meanwhile
	events    *eventLog
	sock      *linesock.Server
	started   float64
	red       *redact.Redactor // the credentials of env, kept out of every file

	manifestMu  sync.Mutex         // orders manifest writes of this Runtime
	manifestSeq int                // manifest writes so far (under manifestMu)
	texts       map[textKey]string // big result texts written so far → their file (under manifestMu)
	running     []RunningStep      // steps under way, for the manifest row

	mu       sync.Mutex
	results  []StepResult
	active   map[*proc]struct{}
	sessions map[string]string // session id → step, for socket reports
	current  string
	onEvents map[string]func(Event)
	// onSession is told every session id as soon as its system/init
	// arrives (seed runtime.on_session); see OnSession.
	onSession func(sessionID string)
}

// OnSession installs fn to be told each session id as soon as a step's
// system/init line names it (seed runtime.on_session), and returns a
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
// first claude's start; a store that cannot open fails each step with a
// StartError, which is not retried), opens the events file and starts the
// report socket.
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
	env = loadDotEnv(env, filepath.Join(ws, ".env"))
	getenv := envlist.Getter(env)
	if err := CheckCredentials(getenv); err != nil {
		return nil, err
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
		env: env, started: unixNow(), active: map[*proc]struct{}{},
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
	if err := r.prepareDirs(getenv); err != nil {
		return nil, err
	}
	if err := r.open(ctx); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// withDefaults gives zero fields of enabled policies the seed's defaults,
// so that a hand-built policy cannot hand off at 10k tokens or never retry.
func withDefaults(o Options) Options {
	if o.StartTimeout <= 0 {
		o.StartTimeout = 60 * time.Second
	}
	if o.Handoff.Enabled {
		if o.Handoff.Window <= 0 {
			o.Handoff.Window = DefaultWindow()
		}
		if o.Handoff.Headroom <= 0 {
			o.Handoff.Headroom = DefaultHeadroom
		}
		if o.Handoff.MaxGenerations <= 0 {
			o.Handoff.MaxGenerations = 8
		}
	}
	if o.Resilience.Enabled {
		def := NewResilience()
		if o.Resilience.MaxAttempts <= 0 {
			o.Resilience.MaxAttempts = def.MaxAttempts
		}
		if o.Resilience.BaseDelay <= 0 {
			o.Resilience.BaseDelay = def.BaseDelay
		}
		if o.Resilience.MaxDelay <= 0 {
			o.Resilience.MaxDelay = def.MaxDelay
		}
		if o.Resilience.ResumePrompt == "" {
			o.Resilience.ResumePrompt = def.ResumePrompt
		}
	}
	return o
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
	return wb.Ensure()
}

// open prepares the session store (when one is wired in) and opens the
// events file and the report socket. The store opens beside the first
// claude's start (see openingStore).
func (r *Runtime) open(ctx context.Context) error {
	if o := r.opts; o.OpenStore != nil && !o.NoStore {
		r.store = openLater(func() (SessionStore, error) {
			st, err := o.OpenStore(ctx, filepath.Join(r.runDir, "sessions.db"), StoreOptions{Workspace: r.workspace, Trim: o.Trim, Ephemeral: o.Ephemeral, KeepDenials: o.KeepDenials})
			if err != nil {
				return nil, fmt.Errorf("harness: session store: %w", err)
			}
			return redactedStore{st, r.red}, nil
		})
	}
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
		"wire one in (batteries.Defaults does), set ANTHROPIC_API_KEY, or turn Portable off", ErrNoCredentials, from)
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
	if r.store != nil && r.store.begun.Load() {
		r.settled.Wait()
		st, err := r.store.wait()
		r.store = nil
		if err != nil {
			return nil // the steps reported it
		}
		return st.Close()
	}
	return nil
}

// openingStore is the session store, opened on first use: an open costs
// milliseconds (SQLite: file, WAL, migrations) and claude hundreds to boot,
// so the first step spawns claude and then opens it (a resume, which needs
// the store first, opens it before the spawn). An open that failed fails
// every step with its error.
type openingStore struct {
	open  func() (SessionStore, error)
	once  sync.Once
	begun atomic.Bool // the open has started (Close has something to close)
	st    SessionStore
	err   error
}

func openLater(open func() (SessionStore, error)) *openingStore {
	return &openingStore{open: open}
}

// wait opens the store (once; callers meanwhile wait for that open) and
// returns it, or why it is not open.
func (o *openingStore) wait() (SessionStore, error) {
	o.once.Do(func() {
		o.begun.Store(true)
		o.st, o.err = o.open()
	})
	return o.st, o.err
}

// checkpointSoon settles the store's writes in the background (while a
// finished claude exits); Close waits for it. Asks that come while a
// checkpoint runs fold into one more after it, so that every write before
// an ask is settled and no more than one checkpoint runs at a time.
func (r *Runtime) checkpointSoon(ctx context.Context) {
	if r.store == nil || !r.store.begun.Load() {
		return // no store, or none opened yet: nothing written to settle
	}
	r.settleMu.Lock()
	defer r.settleMu.Unlock()
	if r.settling {
		r.again = true
		return
	}
	r.settling = true
	r.settled.Add(1)
	go func() {
		defer r.settled.Done()
		st, err := r.store.wait()
		for {
			if err == nil {
				checkpoint(context.WithoutCancel(ctx), st)
			}
			r.settleMu.Lock()
			if !r.again {
				r.settling = false
				r.settleMu.Unlock()
				return
			}
			r.again = false
			r.settleMu.Unlock()
		}
	}()
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
func (r *Runtime) Results() []StepResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]StepResult(nil), r.results...)
}

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
	r.events.write(ev)
	if cb != nil {
		cb(ev)
	}
}

// NewRunID returns a sortable, collision-resistant run id.
func NewRunID() string {
	var b [3]byte
	rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

var projectRe = lazyre.New(`[^A-Za-z0-9_-]+`)

// ProjectKey is the fixed CLAUDE_CODE_PROJECT_DIR_NAME of a workspace:
// its base name (sanitised) plus a short hash of the absolute path, at most
// 64 characters of [A-Za-z0-9_-].
func ProjectKey(workspace string) string {
	base := projectRe().ReplaceAllString(filepath.Base(workspace), "-")
	if len(base) > 40 {
		base = base[:40]
	}
	return fmt.Sprintf("%s-%08x", base, djb2(workspace))
}

func djb2(s string) uint32 {
	h := uint32(5381)
	for i := 0; i < len(s); i++ {
		h = h*33 + uint32(s[i])
	}
	return h
}

func unixNow() float64 { return float64(time.Now().UnixNano()) / 1e9 }

// loadDotEnv adds the variables of path that env does not set yet.
func loadDotEnv(env []string, path string) []string {
	vals, err := godotenv.Read(path)
	if err != nil {
		return env
	}
	get := envlist.Getter(env)
	for k, v := range vals {
		if get(k) == "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}
