package main

import (
	"context"
	"fmt"
	"io"

	flower "github.com/flowerhq/flower"
	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/hooks"
	"github.com/flowerhq/flower/sessionstore"
)

// stepRunner is what the commands need from a Runtime: a flow.Host (what a
// Workflow runs on), the run's id and events file, its results so far, the
// human interrupt and Close. harness.Runtime is the real one; tests run
// commands on fakes.
type stepRunner interface {
	flow.Host // Run, RunDir, Workspace, Record, OnSession
	RunID() string
	EventsPath() string
	Results() []harness.StepResult
	Interrupt(words string) int
	Close() error
}

var _ stepRunner = (*harness.Runtime)(nil)

// factory is how commands get what talks to claude, to a session store and
// to the guards: lazy constructors, called only by the commands that need
// them (as gh's cmdutil.Factory). osEnv fills them with the real ones;
// a test replaces the ones it fakes.
type factory struct {
	// NewRuntime builds the Runtime a step or a flow runs on.
	NewRuntime func(ctx context.Context, o harness.Options) (stepRunner, error)
	// OpenStore opens the session store --store names, with the resume
	// policies of o.
	OpenStore func(ctx context.Context, url string, o harness.StoreOptions) (*sessionstore.Store, error)
	// SelfTest is the guard self-test for this claude and flower-hook
	// (GuardSelfTest): nil when the guards hold.
	SelfTest func(ctx context.Context, claude, hook string) error
	// SandboxCheck says whether the read-only sandbox works here
	// (hooks.SandboxCheck; nil means that one).
	SandboxCheck func() error
}

// realFactory is the factory of a flower process: harness.New, the
// sessionstore with the composition's options (flower.StoreOptions) (its warnings on stderr) and
// GuardSelfTest.
func realFactory(stderr io.Writer) factory {
	return factory{
		NewRuntime: func(ctx context.Context, o harness.Options) (stepRunner, error) {
			rt, err := harness.New(ctx, o)
			if err != nil {
				return nil, err // not a typed nil in the interface
			}
			return rt, nil
		},
		OpenStore: func(ctx context.Context, u string, o harness.StoreOptions) (*sessionstore.Store, error) {
			return sessionstore.OpenURL(ctx, u, flower.StoreOptions(o, func(f string, a ...any) { fmt.Fprintf(stderr, "flower: "+f+"\n", a...) })...)
		},
		SelfTest:     GuardSelfTest,
		SandboxCheck: hooks.SandboxCheck,
	}
}

// runtimeOptions are the Runtime defaults for workspace with what the
// libraries leave to the command wired in: the SQLite session store and the
// credentials copy (the root package flower).
func runtimeOptions(workspace string) harness.Options { return flower.NewOptions(workspace) }
