package flow

import (
	"github.com/flowerhq/flower/harness"
)

// Handoff section names, byte-exact (the same constants as harness).
const (
	HandoffDoing    = harness.HandoffDoing
	HandoffDecided  = harness.HandoffDecided
	HandoffDeadends = harness.HandoffDeadends
	HandoffNext     = harness.HandoffNext
	HandoffScene    = harness.HandoffScene
)

// HandoffPrompt is what the session whose context is full is asked to write
// its own handoff with ({used} and {window} are filled in).
const HandoffPrompt = harness.HandoffPrompt

// Handoff is the document a session writes when its context is full. The
// one implementation lives in harness, which writes the handoffs at run
// time; flow keeps the name so documents are reached from one package.
type Handoff = harness.Handoff

// ParseHandoff parses a model reply into a Handoff with the same heading
// rules as ParseBrief. Step is left empty.
func ParseHandoff(text string) Handoff { return harness.ParseHandoff(text, "") }

// LoadHandoff reads and parses the handoff at path.
func LoadHandoff(path string) (Handoff, error) { return harness.LoadHandoff(path) }

// DegradedHandoff assembles a handoff mechanically when none could be
// written: 现场 carries the first 1200 characters of the original task.
func DegradedHandoff(step, prompt, why string) Handoff {
	return harness.DegradedHandoff(step, prompt, why)
}
