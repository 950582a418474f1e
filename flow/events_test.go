package flow

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/flowerhq/flower/harness"
)

// TestTypedPayloadsAreTheOldMaps: every flow emit site's typed payload
// gives the Data the map literal it replaced gave — the same keys, empty
// values included, and the same Go types (a live event's "index" is still
// an int) — and so the same JSON. The ErrorEvent rows are the control:
// omitempty drops an empty op and keeps a set one, so a difference in keys
// is seen.
func TestTypedPayloadsAreTheOldMaps(t *testing.T) {
	frozen := FrozenGoal{Goal: Goal{Path: "/n/目标.md"}, Text: "## 目标\nx", SHA256: "abc"}
	tests := []struct {
		name string
		got  map[string]any
		want map[string]any
	}{
		{"step, zero values", dataOf(harness.FlowStepEvent{}), map[string]any{"index": 0, "total": 0, "resumed": false, "woke": 0}},
		{"step", dataOf(harness.FlowStepEvent{Index: 1, Total: 3, Resumed: true, Woke: 2}), map[string]any{"index": 1, "total": 3, "resumed": true, "woke": 2}},
		{"lineage error", dataOf(harness.ErrorEvent{Error: "disk full"}), map[string]any{"error": "disk full"}},
		{"control: op set", dataOf(harness.ErrorEvent{Error: "e", Op: "mirror"}), map[string]any{"error": "e", "op": "mirror"}},
		{"task", dataOf(harness.TaskEvent{Unverifiable: []string{"能在 mac 上跑"}, Total: 2, Path: "/n/目标.md"}),
			map[string]any{"unverifiable": []string{"能在 mac 上跑"}, "total": 2, "path": "/n/目标.md"}},
		{"goal frozen", frozen.event("s", harness.GoalFrozen, "").Data,
			map[string]any{"state": "frozen", "path": "/n/目标.md", "sha256": "abc", "text": "## 目标\nx"}},
		{"goal frozen, empty text", FrozenGoal{}.event("s", harness.GoalFrozen, "").Data,
			map[string]any{"state": "frozen", "path": "", "sha256": "", "text": ""}},
		{"goal changed", frozen.event("s", harness.GoalChanged, "def").Data,
			map[string]any{"state": "changed", "path": "/n/目标.md", "sha256": "abc", "disk_sha256": "def"}},
		{"goal changed, file gone", frozen.event("s", harness.GoalChanged, "").Data,
			map[string]any{"state": "changed", "path": "/n/目标.md", "sha256": "abc", "disk_sha256": ""}},
	}
	for _, tt := range tests {
		if !reflect.DeepEqual(tt.got, tt.want) {
			t.Errorf("%s: Data = %#v, want %#v", tt.name, tt.got, tt.want)
		}
		g, _ := json.Marshal(tt.got)
		w, _ := json.Marshal(tt.want)
		if string(g) != string(w) {
			t.Errorf("%s: JSON %s, want %s", tt.name, g, w)
		}
	}
	if dataOf(harness.ErrorEvent{Error: "e"})["op"] != nil {
		t.Error("control: omitempty kept an empty op")
	}
}
