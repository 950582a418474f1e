package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/fleet"
	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/sessionstore"
)

// flowFlag names the flow whose documents travel through --store.
func flowFlag(dst *string) cli.Flag {
	return &cli.StringFlag{Name: "flow", Usage: "keep this flow's brief, goal, Q&A log, handoffs and lineage in --store under `NAME`, and bring them into a workspace that lacks them (another machine, a fresh checkout)", EnvVars: []string{"FLOWER_FLOW"}, Destination: dst}
}

// flowName is the allowlist of --flow names: a queued flow's job-<id>
// fits too, so a person can continue a queued flow's documents.
var flowName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// checkFlowName refuses a --flow that cannot travel: a name outside the
// allowlist, or no --store to keep it in.
func checkFlowName(name, store string) error {
	switch {
	case name == "":
		return nil
	case !flowName.MatchString(name):
		return usagef("--flow %q: a name is letters, digits, '.', '_' and '-' (at most 100, starting with a letter or digit)", name)
	case store == "":
		return usagef("--flow %s needs --store (or FLOWER_STORE): the flow's documents travel through a shared store", name)
	}
	return nil
}

// checkFlowDocs is the --flow flow's documents in st (nil without --flow),
// read-only still. flower continue in a workspace without a complete brief
// goes on only when the store holds one for the flow.
func checkFlowDocs(ctx context.Context, o *starterOptions, pl place, st *sessionstore.Store) (*fleet.Documents, error) {
	if o.Flow == "" {
		return nil, nil
	}
	docs := fleet.NewDocuments(st, o.Flow, flow.WorkbenchFor(pl.Workspace, o.Isolate), flow.NewLineage(pl.RunDir, pl.Workspace, flow.StarterName))
	if !o.Continue {
		return docs, nil
	}
	if w, err := flow.WakeState(pl.Workspace, flow.WakeStateOptions{RunDir: pl.RunDir, Isolate: o.Isolate}); err == nil && w.Wake {
		return docs, nil
	}
	ok, err := docs.StoredBrief(ctx)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, usagef("nothing to continue in %s: no complete brief there, nor for flow %s in %s (start with: flower --flow %s \"…\")", pl.Workspace, o.Flow, st.Path(), o.Flow)
	}
	return docs, nil
}

// restoreFlowDocs writes the stored documents the workspace lacks and says
// which. With --new, which starts over, it deletes them instead: an earlier
// flow's handoffs and lineage must not reach a later flower continue.
// frozen reports whether the store brought the goal the flow froze: the
// flow keeps it (flow.StarterOptions.FrozenGoal) unless new words re-derive
// it.
func restoreFlowDocs(ctx context.Context, e *cmdEnv, o *starterOptions, docs *fleet.Documents) (frozen bool, err error) {
	if docs == nil {
		return false, nil
	}
	if o.New {
		n, err := docs.Forget(ctx)
		if n > 0 && err == nil && !o.Quiet {
			fmt.Fprintf(e.Stderr, "flower: flow %s: --new: forgot the %d documents the store kept for it\n", o.Flow, n)
		}
		return false, err
	}
	restored, err := docs.Restore(ctx)
	if err != nil {
		return false, err
	}
	if len(restored) > 0 && !o.Quiet {
		fmt.Fprintf(e.Stderr, "flower: flow %s: brought %s from the store\n", o.Flow, strings.Join(restored, ", "))
	}
	return docs.HasFrozenGoal(), nil
}
