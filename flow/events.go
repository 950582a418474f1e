package flow

import (
	"time"

	"github.com/flowerhq/flower/harness"
)

// eventOf is the workflow's event of kind for step, now, with payload (one
// of harness's typed payload structs) as its Data.
func eventOf(kind, step string, payload any) harness.Event {
	return harness.Event{Kind: kind, Step: step, Time: time.Now(), Data: harness.EventData(payload)}
}
