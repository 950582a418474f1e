package sessionstore_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowerhq/flower/sessionstore"
)

// TestFenceRefusesEveryWrite: with a fence that refuses, no write of any
// kind (entries, runs, documents, deletions) is applied and each returns
// ErrFenced; the control: the same writes with the fence lifted apply.
func TestFenceRefusesEveryWrite(t *testing.T) {
	backends(t, func(t *testing.T, s *sessionstore.Store) {
		ctx := context.Background()
		key := sessionstore.Key{ProjectKey: "p", SessionID: "s1"}
		entry := []json.RawMessage{json.RawMessage(`{"uuid":"u1","type":"user"}`)}
		writes := map[string]func() error{
			"append": func() error { return s.Append(ctx, key, entry) },
			"run": func() error {
				return s.PutRun(ctx, sessionstore.RunRecord{Run: "r1", StartedAt: 1, Row: json.RawMessage(`{"run":"r1"}`)})
			},
			"documents": func() error {
				return s.PutDocuments(ctx, "job-1", []sessionstore.Document{{Name: "notes/a.md", Body: []byte("a")}})
			},
			"delete documents": func() error { _, err := s.DeleteDocuments(ctx, "job-1"); return err },
			"delete":           func() error { return s.Delete(ctx, key) },
		}
		s.SetFence(func(context.Context, *sql.Tx) error { return sessionstore.ErrFenced })
		for name, w := range writes {
			if err := w(); !errors.Is(err, sessionstore.ErrFenced) {
				t.Errorf("%s under a refusing fence: %v, want ErrFenced", name, err)
			}
		}
		if got, _ := s.Load(ctx, key); len(got) != 0 {
			t.Errorf("a fenced append stored %d entries", len(got))
		}
		if runs, _ := s.Runs(ctx); len(runs) != 0 {
			t.Errorf("a fenced run row was stored: %v", runs)
		}
		if docs, _ := s.Documents(ctx, "job-1"); len(docs) != 0 {
			t.Errorf("fenced documents were stored: %v", docs)
		}
		s.SetFence(func(context.Context, *sql.Tx) error { return nil })
		for _, name := range []string{"append", "run", "documents"} {
			if err := writes[name](); err != nil {
				t.Errorf("control: %s under a passing fence: %v", name, err)
			}
		}
		if got, _ := s.Load(ctx, key); len(got) != 1 {
			t.Errorf("control: %d entries stored, want 1", len(got))
		}
		if docs, _ := s.Documents(ctx, "job-1"); len(docs) != 1 {
			t.Errorf("control: %d documents stored, want 1", len(docs))
		}
	})
}

// TestReadOnlyNeverMigrates: a store opened read-only is never migrated:
// one with an older schema is refused with the way to upgrade it and keeps
// its version; the control, a current store, opens read-only and reads,
// and refuses writes.
func TestReadOnlyNeverMigrates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	s, err := sessionstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	ro, err := sessionstore.Open(path, sessionstore.WithReadOnly())
	if err != nil {
		t.Fatalf("control: a current store read-only: %v", err)
	}
	if _, err := ro.Sessions(context.Background()); err != nil {
		t.Errorf("control: reading: %v", err)
	}
	if err := ro.PutRun(context.Background(), sessionstore.RunRecord{Run: "r", Row: json.RawMessage(`{}`)}); err == nil {
		t.Error("a read-only store took a write")
	}
	ro.Close()
	db, _ := sql.Open("sqlite3", path)
	db.Exec("PRAGMA user_version = 1")
	db.Close()
	if _, err := sessionstore.Open(path, sessionstore.WithReadOnly()); err == nil || !strings.Contains(err.Error(), "older schema") {
		t.Fatalf("an older store read-only: %v", err)
	}
	db, _ = sql.Open("sqlite3", path)
	var v int
	db.QueryRow("PRAGMA user_version").Scan(&v)
	db.Close()
	if v != 1 {
		t.Errorf("the read-only open migrated the store to %d", v)
	}
	if _, err := sessionstore.Open(filepath.Join(t.TempDir(), "none.db"), sessionstore.WithReadOnly()); err == nil {
		t.Error("a read-only open created a store")
	}
}
