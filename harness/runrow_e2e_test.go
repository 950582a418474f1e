package harness_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/sessionstore"
	"github.com/flowerhq/flower/testkit/testbed"
)

// replyingBed is a bed whose model answers every request with text.
func replyingBed(t *testing.T, text string) *testbed.Bed {
	return testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "main", Func: func(scripted.Request) scripted.Reply { return scripted.Reply{Text: text} }}}})
}

// walBytes is the size of the SQLite write-ahead log beside db (0 when
// there is none).
func walBytes(db string) int64 {
	st, err := os.Stat(db + "-wal")
	if err != nil {
		return 0
	}
	return st.Size()
}

// TestE2E_RunRowIsTheResult: on the real CLI, once Run returns the run's
// manifest row on disk holds exactly the returned result and lists nothing
// running, and the session store holds the step's session with its writes
// settled into the database file (an empty write-ahead log); after Close
// the store opens again and still holds it. Controls: while the step ran,
// the log did hold the mirrored lines (the empty log after Run is the
// checkpoint's doing), and a session id that never ran is not in the store.
func TestE2E_RunRowIsTheResult(t *testing.T) {
	t.Parallel()
	b := replyingBed(t, "ROW_OK")
	rt := newRuntime(t, b, nil)
	db := filepath.Join(rt.RunDir(), "sessions.db")
	var walAtResult int64 = -1
	res, err := rt.Run(runCtx(t), harness.NewAgentSpec("main", ""), "go", harness.RunOptions{OnEvent: func(ev harness.Event) {
		if ev.Kind == harness.EventResult {
			walAtResult = walBytes(db)
		}
	}})
	if err != nil || !res.OK || res.Text != "ROW_OK" {
		t.Fatalf("%+v %v", res, err)
	}
	rows, err := harness.ReadManifest(rt.ManifestPath())
	if err != nil || len(rows) != 1 || rows[0].Run != rt.RunID() {
		t.Fatalf("manifest %+v (%v); want the one row of run %s", rows, err, rt.RunID())
	}
	if len(rows[0].Results) != 1 || !reflect.DeepEqual(rows[0].Results[0], res) || len(rows[0].Running) != 0 {
		t.Fatalf("row %+v; want exactly the returned result %+v and nothing running", rows[0], res)
	}
	if walAtResult <= 0 {
		t.Fatalf("control: the write-ahead log held %d bytes at the result; want the mirrored lines in it", walAtResult)
	}
	if n := walBytes(db); n != 0 {
		t.Fatalf("after Run the write-ahead log holds %d bytes; want the step's writes settled", n)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rt.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	st, err := sessionstore.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key, err := st.Find(t.Context(), res.SessionID)
	if err != nil {
		t.Fatalf("the store after Close: %v", err)
	}
	if entries, err := st.Load(t.Context(), key); err != nil || len(entries) == 0 {
		t.Fatalf("session %s in the store: %d entries, %v", res.SessionID, len(entries), err)
	}
	if _, err := st.Find(t.Context(), "00000000-0000-4000-8000-000000000000"); err == nil {
		t.Fatal("control: a session that never ran was found in the store")
	}
}

// TestRun_ConcurrentStepsKeepEveryRow: steps running at once in one Runtime
// each write their running and end rows; the row on disk ends with every
// result and nothing running, whatever order the writes came in.
func TestRun_ConcurrentStepsKeepEveryRow(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t, replyingBed(t, "PARALLEL_OK"), func(o *harness.Options) { o.NoStore = true })
	const n = 4
	results := make([]harness.StepResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = rt.Run(runCtx(t), harness.NewAgentSpec("main", ""), "go", harness.RunOptions{StepName: fmt.Sprintf("s%d", i)})
		}()
	}
	wg.Wait()
	rows, err := harness.ReadManifest(rt.ManifestPath())
	if err != nil || len(rows) != 1 {
		t.Fatalf("rows %+v, %v", rows, err)
	}
	if len(rows[0].Running) != 0 || len(rows[0].Results) != n {
		t.Fatalf("row after %d concurrent steps: running %+v, %d results", n, rows[0].Running, len(rows[0].Results))
	}
	for i := range n {
		if errs[i] != nil || !results[i].OK {
			t.Fatalf("step %d: %+v %v", i, results[i], errs[i])
		}
		found := false
		for _, got := range rows[0].Results {
			found = found || reflect.DeepEqual(got, results[i])
		}
		if !found {
			t.Fatalf("step %d's result %+v is not in the row %+v", i, results[i], rows[0].Results)
		}
	}
	if got := rt.Results(); len(got) != n {
		t.Fatalf("Results() has %d results; want %d", len(got), n)
	}
}
