package scripted_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/flowerhq/flower/scripted"
)

// Every recorded request can be written as JSON lines.
func TestRecordFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	srv, err := scripted.Start(mustParse(t, `{"conversations":[{"replies":[{"text":"x"}]}]}`), "127.0.0.1:0", scripted.WithRecordFile(path))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := httpPost(srv.URL()+"/v1/messages", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	if err != nil || resp != 200 {
		t.Fatalf("post: %v %d", err, resp)
	}
	srv.Close()
	data, _ := os.ReadFile(path)
	var rec scripted.Request
	if err := json.Unmarshal(data, &rec); err != nil || rec.FirstUser() != "hi" || rec.Conversation != "conversation-0" {
		t.Fatalf("record %s: %v", data, err)
	}
}
