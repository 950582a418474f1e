package sessionstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowerhq/flower/sessionstore"
	"github.com/flowerhq/flower/testkit/pgtest"
)

func init() {
	// observe URL TAG N: N batches under helperKey, each followed by a read
	// of the session's mtime; print the mtimes as a JSON list. With
	// SESSIONSTORE_SKEW set, this "machine"'s clock is off by that much.
	helpers["observe"] = func(args []string) int {
		n, _ := strconv.Atoi(args[2])
		var opts []sessionstore.Option
		if d, err := time.ParseDuration(os.Getenv("SESSIONSTORE_SKEW")); err == nil {
			opts = append(opts, sessionstore.WithClock(func() time.Time { return time.Now().Add(d) }))
		}
		ctx := context.Background()
		s, err := sessionstore.OpenURL(ctx, args[0], opts...)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		defer s.Close()
		seen := []int64{}
		for i := range n {
			if err := s.Append(ctx, helperKey, helperBatch(args[1], i)); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			list, err := s.ListSessions(ctx, helperKey.ProjectKey)
			if err != nil || len(list) != 1 {
				fmt.Fprintln(os.Stderr, "list sessions:", list, err)
				return 1
			}
			seen = append(seen, list[0].MTime)
		}
		json.NewEncoder(os.Stdout).Encode(seen)
		return 0
	}
}

// TestSixteenWritersOnPostgres: 16 processes append to one session on one
// PostgreSQL database at once, half of them on "machines" whose clocks are
// an hour off either way. Nothing is lost, each writer's entries keep their
// order, the mtime every writer sees after each of its appends strictly
// rises, and every mtime comes from the database's clock (within a minute of
// now), not from a skewed local one.
func TestSixteenWritersOnPostgres(t *testing.T) {
	u := pgtest.URL(t)
	openURLAt(t, u).Close() // migrate once, so the writers race on appends only
	const writers, batches = 16, 25
	outs := make([]bytes.Buffer, writers)
	errs := make([]bytes.Buffer, writers)
	var wg sync.WaitGroup
	failed := make(chan string, writers)
	start := time.Now()
	for w := range writers {
		cmd := helperCmd(t, "observe", u, fmt.Sprintf("w%02d", w), strconv.Itoa(batches))
		switch w % 4 {
		case 1:
			cmd.Env = append(cmd.Env, "SESSIONSTORE_SKEW=1h")
		case 3:
			cmd.Env = append(cmd.Env, "SESSIONSTORE_SKEW=-1h")
		}
		cmd.Stdout, cmd.Stderr = &outs[w], &errs[w]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cmd.Wait(); err != nil {
				failed <- fmt.Sprintf("writer %d: %v: %s", w, err, errs[w].String())
			}
		}()
	}
	wg.Wait()
	close(failed)
	for f := range failed {
		t.Error(f)
	}
	if t.Failed() {
		t.FailNow()
	}
	end := time.Now()
	for w := range writers {
		var seen []int64
		if err := json.Unmarshal(outs[w].Bytes(), &seen); err != nil || len(seen) != batches {
			t.Fatalf("writer %d printed %q (%v)", w, outs[w].String(), err)
		}
		for i, m := range seen {
			if i > 0 && m <= seen[i-1] {
				t.Errorf("writer %d: mtime after append %d is %d, not above %d", w, i, m, seen[i-1])
			}
			if m < start.Add(-time.Minute).UnixMilli() || m > end.Add(time.Minute).UnixMilli() {
				t.Errorf("writer %d: mtime %d is %v from now: a local clock, not the database's",
					w, m, time.UnixMilli(m).Sub(end).Round(time.Second))
			}
		}
	}
	s := openURLAt(t, u)
	writersInOrder(t, s, writers*batches)
	sums, err := s.ListSessionSummaries(t.Context(), helperKey.ProjectKey)
	if err != nil || len(sums) != 1 {
		t.Fatalf("summaries = %v, %v", sums, err)
	}
	list, _ := s.ListSessions(t.Context(), helperKey.ProjectKey)
	if sums[0].MTime != list[0].MTime {
		t.Errorf("summary mtime %d, session mtime %d: one clock should stamp both", sums[0].MTime, list[0].MTime)
	}
}

func openURLAt(t *testing.T, u string, opts ...sessionstore.Option) *sessionstore.Store {
	t.Helper()
	s, err := sessionstore.OpenURL(t.Context(), u, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestSameResumeOnBothBackends: a transcript imported into SQLite and into
// PostgreSQL materializes to byte-identical files (the same pipeline: expire,
// trim with its spill file, prune, repair), and Find resolves a prefix on both.
func TestSameResumeOnBothBackends(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "projects", "bench", "bench-session.jsonl")
	os.MkdirAll(filepath.Dir(file), 0o755)
	if _, err := genTranscript(file, 3000); err != nil {
		t.Fatal(err)
	}
	var outs [][]byte
	for _, u := range []string{"sqlite://" + filepath.Join(dir, "sessions.db"), pgtest.URL(t)} {
		ws := t.TempDir()
		s := openURLAt(t, u, benchPolicies(ws)...)
		if n, err := s.Import(t.Context(), file); err != nil || n != 3000 {
			t.Fatalf("%s: Import = %d, %v", s.Path(), n, err)
		}
		k, err := s.Find(t.Context(), "bench-sess")
		if err != nil || k != benchKey {
			t.Fatalf("%s: Find = %v, %v", s.Path(), k, err)
		}
		rep, err := s.MaterializeKey(t.Context(), benchKey, filepath.Join(ws, "cfg"))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Trimmed == 0 || rep.Repaired == 0 {
			t.Fatalf("%s: the pipeline did nothing: %+v", s.Path(), rep)
		}
		out, err := os.ReadFile(filepath.Join(ws, "cfg", "projects", "bench", "bench-session.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, bytes.ReplaceAll(out, []byte(ws), []byte("<ws>"))) // spill pointers name the workspace
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Fatalf("SQLite and PostgreSQL materialized different transcripts (%d vs %d bytes)", len(outs[0]), len(outs[1]))
	}
}

// TestOpenURLErrors: a bad URL, an unreachable server and a missing database
// each fail with one line that names the URL with its password masked; the
// control opens the same cluster's real database.
func TestOpenURLErrors(t *testing.T) {
	good := pgtest.URL(t)
	sock := pgtest.SocketDir()
	cases := []struct{ name, url, want string }{
		{"bad url", "postgres://u:s3cret@host:notaport/db", "not a valid PostgreSQL URL"},
		{"unreachable", "postgres://u:s3cret@/db?host=" + t.TempDir(), "no such file"},
		{"missing database", "postgres://postgres:s3cret@/nosuchdb?host=" + sock, `database "nosuchdb" does not exist`},
		{"unknown scheme", "mysql://u:s3cret@host/db", `unknown store scheme "mysql"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := sessionstore.OpenURL(t.Context(), c.url)
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			msg := err.Error()
			if strings.Contains(msg, "s3cret") || !strings.Contains(msg, "xxxxx") || strings.Contains(msg, "\n") {
				t.Errorf("message leaks the password, hides the URL or spans lines: %q", msg)
			}
			if !strings.Contains(msg, c.want) {
				t.Errorf("message %q lacks %q", msg, c.want)
			}
		})
	}
	s, err := sessionstore.OpenURL(t.Context(), good)
	if err != nil {
		t.Fatalf("control: %v", err)
	}
	s.Close()
}

// TestMaskURL: passwords vanish from user info and query, nothing else does.
func TestMaskURL(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:pw@db.example:5432/flower":    "postgres://u:xxxxx@db.example:5432/flower",
		"postgres://u@db/flower?sslmode=require":    "postgres://u@db/flower?sslmode=require",
		"postgresql://db/flower?password=pw&user=u": "postgresql://db/flower?password=xxxxx&user=u",
		"postgres:///flower?host=%2Ftmp%2Fsock":     "postgres:///flower?host=%2Ftmp%2Fsock",
		"/var/run/flower/sessions.db":               "/var/run/flower/sessions.db",
		"postgres://u:p%zz@db/flower":               "postgres://xxxxx@db/flower",
	} {
		if got := sessionstore.MaskURL(in); got != want {
			t.Errorf("MaskURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestConcurrentFirstOpenOnPostgres: eight stores opening one empty
// database at once all succeed; the schema is applied once.
func TestConcurrentFirstOpenOnPostgres(t *testing.T) {
	u := pgtest.URL(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := sessionstore.OpenURL(context.Background(), u)
			if err == nil {
				err = s.Append(context.Background(), helperKey, helperBatch("c", 0))
				s.Close()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	got, err := openURLAt(t, u).Load(t.Context(), helperKey)
	if err != nil || len(got) != 5 {
		t.Fatalf("Load = %d entries, %v; want the 5 (deduplicated on uuid)", len(got), err)
	}
}

// TestRunsOnBothBackends: a run recorded twice keeps its last row; runs
// list oldest first; rows come back verbatim.
func TestRunsOnBothBackends(t *testing.T) {
	for _, s := range []*sessionstore.Store{openTemp(t), openPG(t)} {
		ctx := t.Context()
		put := func(run string, at float64, row string) {
			if err := s.PutRun(ctx, sessionstore.RunRecord{Run: run, StartedAt: at, Row: json.RawMessage(row)}); err != nil {
				t.Fatal(err)
			}
		}
		put("b", 2, `{"run":"b","steps":1}`)
		put("a", 1, `{"run":"a"}`)
		put("b", 2, `{"run":"b","steps":2, "ü":"x"}`)
		got, err := s.Runs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Run != "a" || got[1].Run != "b" || string(got[1].Row) != `{"run":"b","steps":2, "ü":"x"}` {
			t.Errorf("%s: runs = %+v", s.Path(), got)
		}
		if err := s.PutRun(ctx, sessionstore.RunRecord{Run: "c", Row: json.RawMessage("{")}); err == nil {
			t.Errorf("%s: a row that is not JSON was stored", s.Path())
		}
	}
}
