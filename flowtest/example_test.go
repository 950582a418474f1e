package flowtest_test

import (
	"testing"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/flowtest"
	"github.com/flowerhq/flower/harness"
)

// docs/testing.md's "Testing your workflow": a workflow test on a cassette.
// (Compiled, not run: as a test of its own it needs the cassette.)
func ExampleCassette() {
	testMyFlow := func(t *testing.T) {
		m := flowtest.Cassette(t, "testdata/my-flow.cassette")
		o := harness.NewOptions(t.TempDir())
		o.Env = m.Env
		rt, err := harness.New(t.Context(), o)
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close()
		wf := flow.NewWorkflow([]flow.Step{flow.NewStep("hello", harness.NewAgentSpec("plain", ""), flow.Text("say hello"))})
		c, err := wf.Run(t.Context(), rt, nil, nil)
		if err != nil || c.String("hello") == "" || m.Requests() == 0 {
			t.Fatalf("%v %v", c, err)
		}
	}
	_ = testMyFlow
}
