package sessionstore_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/flowerhq/flower/sessionstore"
	"github.com/flowerhq/flower/testkit/fakesecrets"
)

// TestStoreKeepsNoSecret: every secret shape, at the start of a line of a
// tool result in a mirrored entry, in a document and in a run row, is
// replaced before it is stored, on SQLite and on PostgreSQL. The control:
// the entry, the document and the row as written held every secret.
func TestStoreKeepsNoSecret(t *testing.T) {
	var text strings.Builder
	var secrets []string
	for _, s := range fakesecrets.Samples() {
		text.WriteString(s.Text + "\n")
		secrets = append(secrets, s.Secrets...)
	}
	entry, _ := json.Marshal(map[string]any{"uuid": "u1", "type": "user", "message": map[string]any{"content": []any{map[string]any{"type": "tool_result", "content": "$ cat keys.txt\n" + text.String()}}}})
	row, _ := json.Marshal(map[string]string{"run": "r1", "ask": "deploy with\n" + text.String()})
	for _, sec := range secrets {
		if !strings.Contains(text.String(), sec) {
			t.Fatalf("control: the text lacks %.12s…", sec)
		}
	}
	backends(t, func(t *testing.T, s *sessionstore.Store) {
		ctx := context.Background()
		frame, _ := json.Marshal(map[string]any{"type": "transcript_mirror", "filePath": "/cfg/projects/pk/s1.jsonl", "entries": []json.RawMessage{entry}})
		if err := s.Mirror(ctx, frame); err != nil {
			t.Fatal(err)
		}
		if err := s.PutDocuments(ctx, "f1", []sessionstore.Document{{Name: "notes/需求.md", Body: []byte("# brief\n" + text.String())}}); err != nil {
			t.Fatal(err)
		}
		if err := s.PutRun(ctx, sessionstore.RunRecord{Run: "r1", StartedAt: 1, Row: row}); err != nil {
			t.Fatal(err)
		}
		var stored strings.Builder
		entries, err := s.Load(ctx, sessionstore.Key{ProjectKey: "pk", SessionID: "s1"})
		if err != nil || len(entries) != 1 {
			t.Fatalf("load: %d entries, %v", len(entries), err)
		}
		stored.Write(entries[0])
		docs, _ := s.Documents(ctx, "f1")
		runs, _ := s.Runs(ctx)
		if len(docs) != 1 || len(runs) != 1 {
			t.Fatalf("%d documents, %d runs", len(docs), len(runs))
		}
		stored.Write(docs[0].Body)
		stored.Write(runs[0].Row)
		for _, sec := range secrets {
			if strings.Contains(stored.String(), sec) {
				t.Errorf("the store holds %.12s…", sec)
			}
		}
		if !strings.Contains(stored.String(), "[redacted]") || !json.Valid(entries[0]) {
			t.Errorf("stored %s", stored.String())
		}
	})
}
