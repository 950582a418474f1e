package harness

import (
	"context"
	"path/filepath"
	"time"
)

// StoreOptions are the Runtime's session-store policies (trim, ephemeral,
// keep denials) handed to Options.OpenStore.
type StoreOptions struct {
	Workspace   string
	Trim        bool
	Ephemeral   bool
	KeepDenials int
	ReadOnly    bool // a reading command's: never migrated nor changed
}

// Options configure a Runtime. NewOptions fills the defaults (portable,
// ephemeral, one denial kept, spill over 4000 characters, resilience and
// handoffs on, one CLI retry); zero values of Resilience and Handoff mean
// "off", and zero fields of an enabled one take the defaults (window
// DefaultWindow(), 8 generations, 5 attempts, 2s..60s back-off).
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
	// Workbench is nil for none; RunDirWorkbench places it in the run dir.
	// New makes its paths absolute.
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
	// the SQLite store in (flower.Defaults, flower.New).
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
	// Sandbox runs the Bash calls of read-only main threads (a coordinator's
	// glances, the LookOnly roles) in flower-hook's read-only sandbox
	// (bubblewrap, sandbox-exec on macOS; hooks.SandboxCheck says whether
	// it works here).
	Sandbox bool
	// TrustWorkspaceAPI lets the workspace's settings choose the API
	// server, key, model or proxy (CheckAuthority); it takes effect only
	// with TrustWorkspaceEnv=1 in the environment too (not from .env).
	TrustWorkspaceAPI bool
	// GuardsLiveTimeout bounds the wait for a step's live report
	// (StartTimeout when 0).
	GuardsLiveTimeout time.Duration
	// SkipGuardsLive sends the prompt without waiting for the live report:
	// only for test doubles of claude that run no hooks.
	SkipGuardsLive bool
}

// NewOptions returns the defaults for workspace.
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

// withDefaults gives zero fields of enabled policies their defaults,
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
