package sessionstore

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
)

func TestFactsRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name, line string
	}{
		{"tool use", `{"parentUuid":"p1","type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls -la \"x\"\n"}}]},"uuid":"u1"}`},
		{"denied result", `{"parentUuid":null,"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"nope ü","is_error":true}]},"uuid":"u2","toolDenialKind":"user-rejected"}`},
		{"image result", `{"type":"user","isCompactSummary":true,"message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"ab"},{"type":"image","source":{}}]}]},"uuid":"u3"}`},
		{"other line", `{"type":"queue-operation","operation":"enqueue"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := parseLine([]byte(tc.line))
			f := encodeFacts(m)
			got, ok := decodeFacts(f)
			if !ok || !reflect.DeepEqual(got, m) {
				t.Fatalf("decode(encode(%+v)) = %+v, %v (facts %q)", m, got, ok, f)
			}
		})
	}
	if _, ok := decodeFacts("f0\x1eold"); ok {
		t.Fatal("a facts string of another version decoded")
	}
}

// Rows stored without facts (or with facts of another version) are parsed
// from the entry: the pipeline gives the same result.
func TestRowsWithoutFacts(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "s.db"), WithWorkspace(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key := Key{ProjectKey: "pk", SessionID: "s"}
	lines := []json.RawMessage{
		json.RawMessage(`{"parentUuid":null,"type":"user","message":{"role":"user","content":"go"},"uuid":"u1"}`),
		json.RawMessage(`{"parentUuid":"u1","type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"make"}}]},"uuid":"u2"}`),
	}
	if err := s.Append(t.Context(), key, lines); err != nil {
		t.Fatal(err)
	}
	want, wantRep, err := s.LoadForResume(t.Context(), key)
	if err != nil || wantRep.Repaired != 1 {
		t.Fatalf("with facts: %+v, %v", wantRep, err)
	}
	if _, err := s.db.Exec(`UPDATE entries SET facts = CASE WHEN seq % 2 = 0 THEN NULL ELSE 'f0' END`); err != nil {
		t.Fatal(err)
	}
	got, rep, err := s.LoadForResume(t.Context(), key)
	if err != nil || rep != wantRep || len(got) != len(want) {
		t.Fatalf("without facts: %+v, %v", rep, err)
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("line %d differs: %s vs %s", i, got[i], want[i])
		}
	}
}
