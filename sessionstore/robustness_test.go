package sessionstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/sessionstore"
	"github.com/flowerhq/flower/testkit/pgtest"
	"github.com/flowerhq/flower/testkit/testbed"
)

// The test binary doubles as a second process that writes to a store
// (stdlib exec_test style): SESSIONSTORE_HELPER names the scenario.
func TestMain(m *testing.M) {
	if h := os.Getenv("SESSIONSTORE_HELPER"); h != "" {
		os.Exit(helpers[h](os.Args[len(os.Args)-3:]))
	}
	os.Exit(pgtest.Main(m))
}

var helperKey = sessionstore.Key{ProjectKey: "proj", SessionID: "shared"}

func helperBatch(tag string, i int) []json.RawMessage {
	out := make([]json.RawMessage, 5)
	for j := range out {
		out[j] = json.RawMessage(fmt.Sprintf(`{"type":"user","uuid":"%s-%04d-%d","message":{"role":"user","content":"%s"}}`,
			tag, i, j, strings.Repeat("x", 200)))
	}
	return out
}

var helpers = map[string]func(args []string) int{
	// append URL TAG N: N batches of 5 entries under helperKey.
	"append": func(args []string) int {
		n, _ := strconv.Atoi(args[2])
		s, err := sessionstore.OpenURL(context.Background(), args[0])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		defer s.Close()
		for i := range n {
			if err := s.Append(context.Background(), helperKey, helperBatch(args[1], i)); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		return 0
	},
	// fill DB TAG LIMIT: append with the file size limited to LIMIT bytes (a
	// full disk) until a write fails; print {"appended":K,"err":"…"}.
	"fill": func(args []string) int {
		limit, _ := strconv.ParseUint(args[2], 10, 64)
		signal.Ignore(syscall.SIGXFSZ)
		s, err := sessionstore.Open(args[0])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		for i := range 100000 {
			if err := s.Append(context.Background(), helperKey, helperBatch(args[1], i)); err != nil {
				json.NewEncoder(os.Stdout).Encode(map[string]any{"appended": i, "err": err.Error()})
				return 0
			}
		}
		return 1
	},
}

// writersInOrder loads helperKey from s, wants all n batches the writers
// appended (helperBatch) and each writer's entries in the order it wrote
// them, and returns the writers' tags in load order, one per entry.
func writersInOrder(t *testing.T, s *sessionstore.Store, n int) []string {
	t.Helper()
	got, err := s.Load(t.Context(), helperKey)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n*5 {
		t.Fatalf("loaded %d entries, want %d: some were lost", len(got), n*5)
	}
	next := map[string]int{}
	tags := make([]string, 0, len(got))
	for _, e := range got {
		uuid := gjson.GetBytes(e, "uuid").String()
		tag, _, _ := strings.Cut(uuid, "-")
		want := fmt.Sprintf("%s-%04d-%d", tag, next[tag]/5, next[tag]%5)
		if uuid != want {
			t.Fatalf("writer %s: got %s, want %s next (order lost)", tag, uuid, want)
		}
		next[tag]++
		tags = append(tags, tag)
	}
	return tags
}

func helperCmd(t testing.TB, scenario string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := testbed.Command(t, os.Args[0], append([]string{"-test.run=^$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "SESSIONSTORE_HELPER="+scenario)
	return cmd
}

// TestTwoProcessesAppendingLoseNothing: two processes append to one store
// file at once; every entry of both arrives, each process's in its order.
func TestTwoProcessesAppendingLoseNothing(t *testing.T) {
	db := filepath.Join(t.TempDir(), "sessions.db")
	const batches = 150
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for _, tag := range []string{"p1", "p2"} {
		cmd := helperCmd(t, "append", db, tag, strconv.Itoa(batches))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, &out)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer %d: %v\n%s", i+1, err, outs[i])
		}
	}
	tags := writersInOrder(t, openAt(t, db), 2*batches)
	// Two runs of one tag: one writer's entries all came before the other's.
	t.Logf("interleaved writes: %v", len(slices.Compact(tags)) > 2)
}

func openAt(t *testing.T, db string, opts ...sessionstore.Option) *sessionstore.Store {
	t.Helper()
	s, err := sessionstore.Open(db, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestFullDiskFailsLoudly: with the file size capped (what a full disk looks
// like to SQLite), Append returns an error, and every batch it accepted
// before is there — none silently dropped, none half-written.
func TestFullDiskFailsLoudly(t *testing.T) {
	db := filepath.Join(t.TempDir(), "sessions.db")
	openAt(t, db).Close() // create the schema without a limit
	fi, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	cmd := helperCmd(t, "fill", db, "f", strconv.FormatInt(fi.Size()+2<<20, 10))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fill helper: %v (a write never failed?)\n%s", err, stderr.String())
	}
	var res struct {
		Appended int
		Err      string
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("fill helper output %q: %v", out, err)
	}
	t.Logf("append failed after %d batches: %s", res.Appended, res.Err)
	if res.Appended == 0 || !strings.Contains(res.Err, "sessionstore: append") {
		t.Fatalf("want some batches, then a sessionstore error; got %+v", res)
	}
	got, err := openAt(t, db).Load(t.Context(), helperKey)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != res.Appended*5 {
		t.Fatalf("store holds %d entries, but %d batches of 5 were accepted", len(got), res.Appended)
	}
}

// TestReadOnlyStoreFailsLoudly: a store whose file became read-only refuses
// the append (or the open) with an error; nothing is half-written. Another
// process does the append, as an unprivileged user when the tests run as
// root (chmod does not stop root).
func TestReadOnlyStoreFailsLoudly(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "sessions.db")
	s, err := sessionstore.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(t.Context(), helperKey, helperBatch("ok", 0)); err != nil {
		t.Fatal(err)
	}
	defer s.Close() // kept open: the -wal and -shm files stay, so the read-only open succeeds
	for _, f := range []string{db, db + "-wal", db + "-shm", dir} {
		os.Chmod(f, 0o555)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	cmd := helperCmd(t, "append", db, "ro", "1")
	if os.Geteuid() == 0 {
		// Run as nobody a copy of the test binary that nobody may run, from
		// a folder nobody may enter (go test's and t.TempDir's are private).
		bin := filepath.Join(t.TempDir(), "helper")
		data, err := os.ReadFile(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, data, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{filepath.Dir(bin), filepath.Dir(dir)} {
			os.Chmod(d, 0o755)
		}
		cmd.Path, cmd.Args[0] = bin, bin
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: 65534, Gid: 65534}
	}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "read-only") && !strings.Contains(string(out), "readonly") {
		t.Fatalf("Open+Append on a read-only store: %v, %s; want an error saying read-only", err, out)
	}
	t.Logf("failed loudly: %s", out)
	os.Chmod(dir, 0o755)
	got, err := openAt(t, db).Load(t.Context(), helperKey)
	if err != nil || len(got) != 5 {
		t.Fatalf("after the failed append: %d entries, err %v; want the 5 from before", len(got), err)
	}
}

// TestBadInput: corrupt lines are skipped with a warning naming file and
// line; a missing session gives a clear error; a spill dir that cannot be
// written fails the load instead of dropping content.
func TestBadInput(t *testing.T) {
	var warnings []string
	s := openTemp(t, sessionstore.WithLogf(func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }))
	dir := filepath.Join(t.TempDir(), "projects", "pk")
	os.MkdirAll(dir, 0o755)
	file := filepath.Join(dir, "sess-bad.jsonl")
	os.WriteFile(file, []byte(`{"type":"user","uuid":"u1","message":{"role":"user","content":"hi"}}
{"type":"assistant","uuid":"u2","message":{"id":"m1","role":"ass
not json at all

{"type":"assistant","uuid":"u3","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"ok"}]}}
[1,2,3]
`), 0o644)
	n, err := s.Import(t.Context(), file)
	if err != nil || n != 2 {
		t.Fatalf("Import = %d, %v; want 2 entries", n, err)
	}
	wantWarn := []string{file + ":2:", file + ":3:", file + ":6:"}
	if len(warnings) != len(wantWarn) {
		t.Fatalf("warnings = %q, want %d naming %s lines 2, 3, 6", warnings, len(wantWarn), file)
	}
	for i, w := range wantWarn {
		if !strings.Contains(warnings[i], w) {
			t.Errorf("warning %q does not name %q", warnings[i], w)
		}
	}

	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"Find", func() error { _, err := s.Find(t.Context(), "no-such-session"); return err }},
		{"LoadForResume", func() error {
			_, _, err := s.LoadForResume(t.Context(), sessionstore.Key{ProjectKey: "pk", SessionID: "no-such-session"})
			return err
		}},
		{"Materialize", func() error {
			_, err := s.MaterializeKey(t.Context(), sessionstore.Key{ProjectKey: "pk", SessionID: "no-such-session"}, t.TempDir())
			return err
		}},
		{"Export", func() error {
			return s.Export(t.Context(), sessionstore.Key{ProjectKey: "pk", SessionID: "no-such-session"}, &bytes.Buffer{})
		}},
	} {
		t.Run("missing session/"+tc.name, func(t *testing.T) {
			err := tc.call()
			if !errors.Is(err, sessionstore.ErrNotFound) || !strings.Contains(err.Error(), "no-such-session") {
				t.Fatalf("err = %v, want ErrNotFound naming the id", err)
			}
		})
	}

	t.Run("unwritable spill dir", func(t *testing.T) {
		ws := t.TempDir()
		os.WriteFile(filepath.Join(ws, ".flower"), []byte("a file where the spill dir should be"), 0o644)
		trim := sessionstore.DefaultTrimPolicy()
		trim.KeepRecent = 0
		st := openTemp(t, sessionstore.WithWorkspace(ws), sessionstore.WithTrim(trim))
		key := sessionstore.Key{ProjectKey: "pk", SessionID: "s"}
		st.Append(t.Context(), key, transcriptLines(toolTurn("t1", "Read", `{"file_path":"/x"}`, strings.Repeat("y", 5000))))
		if _, _, err := st.LoadForResume(t.Context(), key); err == nil || !strings.Contains(err.Error(), "spill") {
			t.Fatalf("LoadForResume with an unwritable spill dir: err = %v, want a spill error", err)
		}
	})
}
