package sessionstore_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flowerhq/flower/sessionstore"
)

// walSize is the size of the store's write-ahead log (0 when there is none).
func walSize(t *testing.T, s *sessionstore.Store) int64 {
	t.Helper()
	st, err := os.Stat(s.Path() + "-wal")
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

func appendBig(t *testing.T, s *sessionstore.Store, key sessionstore.Key, n int) {
	t.Helper()
	for i := range n {
		e := fmt.Sprintf(`{"type":"user","uuid":"u-%s-%d","message":{"role":"user","content":%q}}`, key.SessionID, i, strings.Repeat("x", 20000))
		if err := s.Append(context.Background(), key, []json.RawMessage{json.RawMessage(e)}); err != nil {
			t.Fatal(err)
		}
	}
}

// Checkpoint empties the write-ahead log, so that Close has nothing to
// copy or free (the control: the appends filled it). Against a reader that
// holds an older snapshot it returns after a short wait, copying what it
// can, and writes still wait their full time for a lock afterwards.
func TestCheckpointEmptiesTheLog(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	key := sessionstore.Key{ProjectKey: "p", SessionID: "s1"}
	appendBig(t, s, key, 5)
	if walSize(t, s) == 0 {
		t.Fatal("control: the appends left no write-ahead log")
	}
	if err := s.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if n := walSize(t, s); n != 0 {
		t.Fatalf("write-ahead log holds %d bytes after Checkpoint; want it emptied", n)
	}

	reader, err := sql.Open("sqlite3", "file:"+s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	tx, err := reader.Begin()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRow("SELECT count(*) FROM entries").Scan(&n); err != nil {
		t.Fatal(err)
	}
	appendBig(t, s, sessionstore.Key{ProjectKey: "p", SessionID: "s2"}, 3)
	done := make(chan error, 1)
	go func() { done <- s.Checkpoint(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Checkpoint waited for the reader (the store's 30 s lock wait) instead of settling for what it could copy")
	}
	tx.Rollback()

	// A writer holds the lock for longer than Checkpoint's short wait: the
	// store's next write (on the connection Checkpoint gave back) waits it out.
	w, err := reader.Begin() // the DSN's deferred BEGIN: take the lock by writing
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec("CREATE TABLE hold (x)"); err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		// A hold of a set length, longer than Checkpoint's short wait, is
		// what is tested here (not a wait for something to happen).
		time.Sleep(300 * time.Millisecond)
		w.Rollback()
		close(released)
	}()
	appendBig(t, s, sessionstore.Key{ProjectKey: "p", SessionID: "s3"}, 1)
	<-released
	if err := s.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if n := walSize(t, s); n != 0 {
		t.Fatalf("write-ahead log holds %d bytes once the others are gone; want it emptied", n)
	}
	if got, _ := s.Load(ctx, sessionstore.Key{ProjectKey: "p", SessionID: "s2"}); len(got) != 3 {
		t.Fatalf("s2 has %d entries, want 3", len(got))
	}
}
