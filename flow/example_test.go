package flow_test

import (
	"context"
	"fmt"
	"log"

	flower "github.com/flowerhq/flower"
	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
)

// The README's "Go library in five lines": the starter flow on a Runtime.
// (Compiled, not run: it needs credentials and a real model.)
func Example() {
	ctx := context.Background()
	wf, _ := flow.StarterFlow("add a --verbose flag", flow.DefaultStarterOptions())
	o := harness.NewOptions(".")
	flower.Defaults(&o)        // the SQLite store and the credentials copy
	o.Workbench = wf.Workbench // the guards that come with a workbench
	rt, _ := harness.New(ctx, o)
	c, err := wf.Run(ctx, rt, func(e harness.Event) { log.Println(e.Kind, e.Step) }, nil)
	fmt.Println(c.Outcome(), err)
}

// The Runtime is a workflow's Host: it runs the steps, keeps the Lineage's
// run dir and workspace, records the workflow's events and reports
// sessions as soon as they start.
var _ flow.Host = (*harness.Runtime)(nil)
