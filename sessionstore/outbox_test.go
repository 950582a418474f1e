package sessionstore_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flowerhq/flower/sessionstore"
	"github.com/flowerhq/flower/testkit/testbed"
)

// mirrorFrame is a transcript_mirror line of session sid with one entry
// per uuid.
func mirrorFrame(sid string, uuids ...string) []byte {
	var entries []json.RawMessage
	for _, u := range uuids {
		entries = append(entries, json.RawMessage(`{"type":"user","uuid":"`+u+`","message":{"role":"user","content":"hi"}}`))
	}
	b, _ := json.Marshal(map[string]any{"type": "transcript_mirror", "filePath": "/c/projects/pk/" + sid + ".jsonl", "entries": entries})
	return b
}

// TestOutboxKeepsWritesThroughAnOutage: a store whose database cannot be
// reached (its fence fails as a dead connection would) keeps mirrored
// lines, a run row and documents (each write returns nil) and makes them
// once it can; a store closed while it still cannot spools them to a
// private file, which ReplayOutbox makes under each write's fence (one
// refused by its fence is dropped). A fence's refusal is never kept.
// Control: without the outbox the same write fails and nothing is stored.
func TestOutboxKeepsWritesThroughAnOutage(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var away atomic.Bool
	outage := func(context.Context, *sql.Tx) error {
		if away.Load() {
			return errors.New("dial unix /run/pg/.s.PGSQL.5432: connect: no such file or directory")
		}
		return nil
	}
	open := func(string) *sessionstore.Store {
		s, err := sessionstore.Open(filepath.Join(dir, "store.db"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	key := sessionstore.Key{ProjectKey: "pk", SessionID: "s1"}
	control := open("control")
	control.SetFence(outage)
	away.Store(true)
	if err := control.Mirror(ctx, mirrorFrame("s1", "u0")); err == nil {
		t.Fatal("control: a write without an outbox succeeded in an outage")
	}
	control.Close()

	s := open("kept")
	s.SetFence(outage)
	s.SetOutbox(sessionstore.OutboxOptions{Dir: filepath.Join(dir, "spool"), Patience: time.Minute, Label: json.RawMessage(`{"job":1}`)})
	for name, err := range map[string]error{
		"mirror":    s.Mirror(ctx, mirrorFrame("s1", "u1", "u2")),
		"run":       s.PutRun(ctx, sessionstore.RunRecord{Run: "r1", StartedAt: 1, Row: json.RawMessage(`{"run":"r1"}`)}),
		"documents": s.PutDocuments(ctx, "job-1", []sessionstore.Document{{Name: "notes/a.md", Body: []byte("a")}}),
	} {
		if err != nil {
			t.Errorf("%s in an outage with an outbox: %v, want kept", name, err)
		}
	}
	if got, _ := s.Load(ctx, key); len(got) != 0 {
		t.Fatalf("%d entries stored while the store was away", len(got))
	}
	away.Store(false)
	testbed.Await(t, "the kept writes made", func() bool {
		got, _ := s.Load(ctx, key)
		runs, _ := s.Runs(ctx)
		docs, _ := s.Documents(ctx, "job-1")
		return len(got) == 2 && len(runs) == 1 && len(docs) == 1
	})
	s.SetFence(func(context.Context, *sql.Tx) error { return sessionstore.ErrFenced })
	if err := s.Mirror(ctx, mirrorFrame("s1", "u9")); !errors.Is(err, sessionstore.ErrFenced) {
		t.Errorf("a fenced write with an outbox: %v, want ErrFenced", err)
	}
	s.Close()

	// Closed in the outage: spooled, then replayed.
	spool := filepath.Join(dir, "spool")
	for i, label := range []string{`{"job":2}`, `{"job":3}`} {
		s := open("spooled")
		s.SetFence(outage)
		s.SetOutbox(sessionstore.OutboxOptions{Dir: spool, Patience: 10 * time.Millisecond, Label: json.RawMessage(label)})
		away.Store(true)
		if err := s.Mirror(ctx, mirrorFrame("s2", "v"+string(rune('a'+i)))); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	files, _ := filepath.Glob(filepath.Join(spool, "outbox-*.jsonl"))
	if len(files) != 2 {
		t.Fatalf("spooled files: %v, want 2", files)
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("a spooled file's mode: %v %v, want 0600", fi.Mode(), err)
	}
	r := open("replay")
	defer r.Close()
	made, refused, err := r.ReplayOutbox(ctx, spool, func(label json.RawMessage) sessionstore.FenceFunc {
		if string(label) == `{"job":3}` {
			return func(context.Context, *sql.Tx) error { return sessionstore.ErrFenced }
		}
		return nil
	})
	got, _ := r.Load(ctx, sessionstore.Key{ProjectKey: "pk", SessionID: "s2"})
	if err != nil || made != 1 || refused != 1 || len(got) != 1 {
		t.Errorf("replay: made %d, refused %d, %v; %d entries stored (want 1, 1, nil, 1)", made, refused, err, len(got))
	}
	if left, _ := filepath.Glob(filepath.Join(spool, "outbox-*.jsonl")); len(left) != 0 {
		t.Errorf("replayed files left: %v", left)
	}
}
