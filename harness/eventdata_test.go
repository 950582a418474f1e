package harness

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestEventData_SameJSONAsTheMaps: each payload struct the Runtime emits
// gives the Data, and so the events.jsonl and --json bytes, that the map
// literal it replaced gave: the same keys (empty values included where the
// map had them, none where it had none) and the same values, Go types
// included for the live event (but for the stream's counters of api_retry
// and result, which were int64s as gjson reads them and are ints now: the
// same JSON, and every reader decodes them). Controls: the union struct
// HandoffEvent in place of a phase's payload, and ErrorEvent without
// omitempty, give other bytes, so the comparison can fail.
func TestEventData_SameJSONAsTheMaps(t *testing.T) {
	for _, tc := range []struct {
		name    string
		payload any
		was     map[string]any
	}{
		{"step_start", StepStartEvent{Resume: "", Fork: false}, map[string]any{"resume": "", "fork": false}},
		{"step_end", StepEndEvent{OK: true, Error: "", SessionID: "s", Attempts: 1},
			map[string]any{"ok": true, "error": "", "session_id": "s", "attempts": 1}},
		{"interrupt", InterruptEvent{Words: "stop", SessionID: "s"}, map[string]any{"words": "stop", "session_id": "s"}},
		{"retry", RetryEvent{Attempt: 2, Kind: KindRetry, Error: "boom", DelayS: 0.5},
			map[string]any{"attempt": 2, "kind": "retry", "error": "boom", "delay_s": 0.5}},
		{"store mirror", ErrorEvent{Error: "e", Op: "mirror"}, map[string]any{"error": "e", "op": "mirror"}},
		{"store materialize", ErrorEvent{Error: "e", Op: "materialize", SessionID: "s"},
			map[string]any{"error": "e", "op": "materialize", "session_id": "s"}},
		{"store materialize fresh", ErrorEvent{Error: "e", Op: "materialize", SessionID: "s", Fresh: true},
			map[string]any{"error": "e", "op": "materialize", "session_id": "s", "fresh": true}},
		{"error", ErrorEvent{Error: "e"}, map[string]any{"error": "e"}},
		{"handoff near", handoffNear{Phase: HandoffNear, Context: 9, WarnAt: 8, At: 10},
			map[string]any{"phase": "near", "context": 9, "warn_at": 8, "at": 10}},
		{"handoff writing", handoffWriting{Phase: HandoffWriting, SessionID: "s", Context: 9},
			map[string]any{"phase": "writing", "session_id": "s", "context": 9}},
		{"handoff done", handoffDone{Phase: HandoffDone, Degraded: false, Path: "", Sections: nil, Retired: "s", CostUSD: 0},
			map[string]any{"phase": "done", "degraded": false, "path": "", "sections": []string(nil), "retired": "s", "cost_usd": float64(0)}},
		{"offline probe", offlineProbe{Host: "h:443", Error: "e", NextProbe: "t", WaitedS: 0.2},
			map[string]any{"host": "h:443", "error": "e", "next_probe": "t", "waited_s": 0.2}},
		{"offline gave up", offlineGaveUp{Host: "h:443", Error: "e", GaveUp: true},
			map[string]any{"host": "h:443", "error": "e", "gave_up": true}},
		{"online", OnlineEvent{Host: "h:443", WaitedS: 1.5}, map[string]any{"host": "h:443", "waited_s": 1.5}},
		{"garbage", GarbageEvent{Line: "x"}, map[string]any{"line": "x"}},
		{"stall", StallEvent{IdleS: 300, SessionID: "s"}, map[string]any{"idle_s": float64(300), "session_id": "s"}},
		{"init", InitEvent{SessionID: "s", Model: "m"}, map[string]any{"session_id": "s", "model": "m"}},
		{"api_retry", APIRetryEvent{Attempt: 1, ErrorStatus: 529}, map[string]any{"attempt": 1, "error_status": 529}},
		{"result", ResultEvent{Subtype: "success", IsError: false, NumTurns: 1, CostUSD: 0.01},
			map[string]any{"subtype": "success", "is_error": false, "num_turns": 1, "cost_usd": 0.01}},
	} {
		got := EventData(tc.payload)
		if !reflect.DeepEqual(got, tc.was) {
			t.Errorf("%s: Data %#v; the map was %#v", tc.name, got, tc.was)
		}
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(tc.was)
		c, _ := json.Marshal(tc.payload)
		if string(a) != string(b) || !sameKeys(t, c, b) {
			t.Errorf("%s: JSON %s (struct %s); the map gave %s", tc.name, a, c, b)
		}
	}
	union, _ := json.Marshal(EventData(HandoffEvent{Phase: HandoffNear, Context: 9, WarnAt: 8, At: 10}))
	near, _ := json.Marshal(EventData(handoffNear{Phase: HandoffNear, Context: 9, WarnAt: 8, At: 10}))
	if string(union) == string(near) {
		t.Error("control: the union HandoffEvent gives the near phase's bytes")
	}
	type plain struct {
		Error string `json:"error"`
		Op    string `json:"op"`
	}
	if reflect.DeepEqual(EventData(plain{Error: "e"}), EventData(ErrorEvent{Error: "e"})) {
		t.Error("control: a field without omitempty is left out too")
	}
}

// sameKeys reports whether two JSON objects decode to the same map.
func sameKeys(t *testing.T, a, b []byte) bool {
	var x, y map[string]any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		t.Fatalf("not JSON objects: %s, %s", a, b)
	}
	return reflect.DeepEqual(x, y)
}

// TestEventData_ReadBack: what the accessors decode from a live event built
// with EventData equals the payload, and so does a read-back one (through
// events.jsonl's JSON): StepStats folds both alike.
func TestEventData_ReadBack(t *testing.T) {
	live := Event{Kind: EventResult, Data: EventData(ResultEvent{Subtype: "success", NumTurns: 3, CostUSD: 0.25})}
	data, err := json.Marshal(live)
	if err != nil {
		t.Fatal(err)
	}
	var back Event
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	for _, e := range []Event{live, back} {
		if r, ok := e.Result(); !ok || r.NumTurns != 3 || r.CostUSD != 0.25 || r.Subtype != "success" {
			t.Fatalf("Result() of %+v: %+v %v", e, r, ok)
		}
	}
	if h, _ := (Event{Kind: EventHandoff, Data: EventData(handoffDone{Phase: HandoffDone, CostUSD: 0.5})}).Handoff(); h.Phase != HandoffDone || h.CostUSD != 0.5 {
		t.Fatalf("HandoffEvent from the done phase: %+v", h)
	}
}
