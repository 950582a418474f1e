package sessionstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/flowerhq/flower/sessionstore"
)

// backends runs f on SQLite and on PostgreSQL.
func backends(t *testing.T, f func(t *testing.T, s *sessionstore.Store)) {
	t.Run("sqlite", func(t *testing.T) { f(t, openTemp(t)) })
	t.Run("postgres", func(t *testing.T) { f(t, openPG(t)) })
}

// TestDocuments: a flow's documents come back as put, a later put replaces
// a name and leaves the others, flows do not see each other's; a name that
// could leave the workbench is refused, and nothing of that batch is
// stored (the control: the same batch without it is).
func TestDocuments(t *testing.T) {
	backends(t, func(t *testing.T, s *sessionstore.Store) {
		ctx := context.Background()
		put := func(flow string, kv ...string) error {
			var docs []sessionstore.Document
			for i := 0; i < len(kv); i += 2 {
				docs = append(docs, sessionstore.Document{Name: kv[i], Body: []byte(kv[i+1])})
			}
			return s.PutDocuments(ctx, flow, docs)
		}
		get := func(flow string) string {
			docs, err := s.Documents(ctx, flow)
			if err != nil {
				t.Fatal(err)
			}
			var sb strings.Builder
			for _, d := range docs {
				fmt.Fprintf(&sb, "%s=%s;", d.Name, d.Body)
			}
			return sb.String()
		}
		if err := put("job-1", "notes/需求.md", "brief", "lineage.json", "{}"); err != nil {
			t.Fatal(err)
		}
		if err := put("job-1", "notes/需求.md", "brief v2"); err != nil {
			t.Fatal(err)
		}
		if err := put("job-2", "notes/目标.md", "goal"); err != nil {
			t.Fatal(err)
		}
		if got, want := get("job-1"), "lineage.json={};notes/需求.md=brief v2;"; got != want {
			t.Errorf("job-1: %q, want %q", got, want)
		}
		for _, bad := range []string{"../x", "/etc/passwd", "notes/../../x", "", "a\\b", "."} {
			if err := put("job-3", "notes/ok.md", "ok", bad, "x"); err == nil {
				t.Errorf("name %q was accepted", bad)
			}
		}
		if got := get("job-3"); got != "" {
			t.Errorf("a refused batch left %q", got)
		}
		if err := put("job-3", "notes/ok.md", "ok"); err != nil || get("job-3") != "notes/ok.md=ok;" {
			t.Errorf("control: %v %q", err, get("job-3"))
		}
		if n, err := s.DeleteDocuments(ctx, "job-1"); err != nil || n != 2 || get("job-1") != "" {
			t.Errorf("delete job-1: %d %v, left %q", n, err, get("job-1"))
		}
		if get("job-2") != "notes/目标.md=goal;" {
			t.Errorf("deleting job-1 touched job-2: %q", get("job-2"))
		}
	})
}

// TestAdopt: a session recorded under workspace A, adopted under B, is
// there in full (subagent transcript too) and becomes the newest holder;
// adopting again copies nothing; B's own later entries chain on.
func TestAdopt(t *testing.T) {
	backends(t, func(t *testing.T, s *sessionstore.Store) {
		ctx := context.Background()
		a := sessionstore.Key{ProjectKey: "-ws-a", SessionID: "s1"}
		line := func(uuid, parent string) json.RawMessage {
			return json.RawMessage(fmt.Sprintf(`{"type":"user","uuid":%q,"parentUuid":%q,"message":{"role":"user","content":"hi %s"}}`, uuid, parent, uuid))
		}
		if err := s.Append(ctx, a, []json.RawMessage{line("u1", ""), line("u2", "u1")}); err != nil {
			t.Fatal(err)
		}
		if err := s.Append(ctx, sessionstore.Key{ProjectKey: "-ws-a", SessionID: "s1", Subpath: "subagents/agent-x"}, []json.RawMessage{line("x1", "")}); err != nil {
			t.Fatal(err)
		}
		n, err := s.Adopt(ctx, a, "-ws-b")
		if err != nil || n != 3 {
			t.Fatalf("adopt: %d entries, %v", n, err)
		}
		if n, err := s.Adopt(ctx, a, "-ws-b"); err != nil || n != 0 {
			t.Errorf("a second adopt copied %d (%v)", n, err)
		}
		b := sessionstore.Key{ProjectKey: "-ws-b", SessionID: "s1"}
		if err := s.Append(ctx, b, []json.RawMessage{line("u3", "u2")}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Load(ctx, b)
		if err != nil || len(got) != 3 || !strings.Contains(string(got[0]), "u1") || !strings.Contains(string(got[2]), "u3") {
			t.Fatalf("B's copy: %d entries %v", len(got), err)
		}
		if subs, _ := s.ListSubkeys(ctx, b); len(subs) != 1 {
			t.Errorf("B's subagent transcripts: %v", subs)
		}
		holders, err := s.Holders(ctx, "s1")
		if err != nil || len(holders) != 2 || holders[0] != b {
			t.Errorf("holders %v (%v), want B first", holders, err)
		}
		if got, _ := s.Load(ctx, a); len(got) != 2 {
			t.Errorf("A's own copy changed: %d entries", len(got))
		}
	})
}
