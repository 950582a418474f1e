package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
)

// VerdictBudget is the verdict of a flow stopped by --max-budget-usd.
const VerdictBudget = "budget"

// budgetRunner is the Runtime with a flow-wide budget: every step gets what
// is left as its own --max-budget-usd, and once the steps' summed cost
// reaches the budget no further step starts.
type budgetRunner struct {
	stepRunner
	max float64

	mu    sync.Mutex
	spent float64
	hit   bool
}

// withBudget wraps rt when max > 0; the guard's apply marks an outcome
// whose flow the budget stopped.
func withBudget(rt stepRunner, max float64) (flow.Host, *budgetRunner) {
	if max <= 0 {
		return rt, nil
	}
	b := &budgetRunner{stepRunner: rt, max: max}
	return b, b
}

func (b *budgetRunner) Run(ctx context.Context, spec harness.AgentSpec, prompt string, o harness.RunOptions) (harness.StepResult, error) {
	b.mu.Lock()
	left := b.max - b.spent
	if left <= 0 {
		b.hit = true
	}
	b.mu.Unlock()
	if left <= 0 {
		return harness.StepResult{Step: o.StepName, Error: b.message()}, nil
	}
	if spec.MaxBudgetUSD <= 0 || spec.MaxBudgetUSD > left {
		spec.MaxBudgetUSD = left
	}
	res, err := b.stepRunner.Run(ctx, spec, prompt, o)
	b.mu.Lock()
	b.spent += res.CostUSD
	if b.spent >= b.max && !res.OK {
		b.hit = true
	}
	b.mu.Unlock()
	return res, err
}

func (b *budgetRunner) message() string {
	return fmt.Sprintf("budget: the steps cost $%.4f of --max-budget-usd %g", b.spent, b.max)
}

// apply turns an outcome whose flow the budget stopped into verdict
// "budget", exit 1. A nil guard (no budget) changes nothing.
func (b *budgetRunner) apply(o *flowOutcome) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.hit || o.ExitCode == exitInterrupted {
		return
	}
	o.OK, o.ExitCode, o.Verdict, o.Error = false, exitFailed, VerdictBudget, b.message()
}
