package harness_test

import "context"
import "errors"
import "strings"
import "sync"
import "testing"

import "github.com/flowerhq/flower/harness"
import "github.com/flowerhq/flower/internal/testbed"
import "github.com/flowerhq/flower/scripted"

// fakeStore records what the Runtime does with its session store.
type fakeStore struct {
	mu          sync.Mutex
	mirrored    int
	checkpoints int
	closed      bool
	closedAfter int // checkpoints done when Close came
}

func (f *fakeStore) Mirror(context.Context, []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mirrored++
	return nil
}

func (f *fakeStore) Materialize(context.Context, string, string, string) error { return nil }

func (f *fakeStore) Checkpoint(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checkpoints++
	return nil
}

func (f *fakeStore) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed, f.closedAfter = true, f.checkpoints
	return nil
}

// TestRun_StoreOpensBesideClaude: the store opens while the first claude
// starts. A store that cannot open fails the step with its error, once (a
// StartError is not retried), and the model is never asked; the control
// with a store that opens mirrors the session, settles it when the result
// arrives and again beside the end row, and closes it after that.
func TestRun_StoreOpensBesideClaude(t *testing.T) {
	t.Parallel()
	b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "main", Func: func(scripted.Request) scripted.Reply { return scripted.Reply{Text: "STORED"} }}}})

	bad := newRuntime(t, b, func(o *harness.Options) {
		o.OpenStore = func(context.Context, string, harness.StoreOptions) (harness.SessionStore, error) {
			return nil, errors.New("disk on fire")
		}
	})
	res, err := bad.Run(runCtx(t), harness.NewAgentSpec("main", ""), "hello", harness.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || !strings.Contains(res.Error, "session store: disk on fire") || res.Attempts != 1 {
		t.Fatalf("a store that cannot open: ok=%v attempts=%d error=%q; want a failed step naming the store, one attempt", res.OK, res.Attempts, res.Error)
	}
	if n := len(b.Model.Requests()); n != 0 {
		t.Fatalf("the model got %d requests from a step without its store", n)
	}

	fs := &fakeStore{}
	good := newRuntime(t, b, func(o *harness.Options) {
		o.OpenStore = func(context.Context, string, harness.StoreOptions) (harness.SessionStore, error) { return fs, nil }
	})
	res, err = good.Run(runCtx(t), harness.NewAgentSpec("main", ""), "hello", harness.RunOptions{})
	if err != nil || !res.OK || res.Text != "STORED" {
		t.Fatalf("control: %+v %v", res, err)
	}
	if err := good.Close(); err != nil {
		t.Fatal(err)
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	// One checkpoint when the result arrives, one beside the end row; Close
	// only after both.
	if fs.mirrored == 0 || fs.checkpoints != 2 || !fs.closed || fs.closedAfter != 2 {
		t.Fatalf("store saw mirrored=%d checkpoints=%d closed=%v (after %d checkpoints); want lines mirrored, two checkpoints, then Close",
			fs.mirrored, fs.checkpoints, fs.closed, fs.closedAfter)
	}
}
