package harness_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// fakeStore records what the Runtime does with its session store, in
// order (and, from the test, when the result arrived).
type fakeStore struct {
	mu  sync.Mutex
	ops []string // "mirror", "checkpoint", "close", "result"
}

func (f *fakeStore) did(op string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ops = append(f.ops, op)
}

func (f *fakeStore) Mirror(context.Context, []byte) error { f.did("mirror"); return nil }

func (f *fakeStore) Materialize(context.Context, string, string, string) error { return nil }

func (f *fakeStore) Checkpoint(context.Context) error { f.did("checkpoint"); return nil }

func (f *fakeStore) Close() error { f.did("close"); return nil }

// TestRun_StoreOpensBesideClaude: the store opens while the first claude
// starts. A store that cannot open fails the step with its error, once (a
// StartError is not retried), and the model is never asked; the control
// with a store that opens mirrors the session (lines the CLI mirrors after
// the result included), settles it once the step has ended, and closes it
// after that.
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
	res, err = good.Run(runCtx(t), harness.NewAgentSpec("main", ""), "hello", harness.RunOptions{OnEvent: func(ev harness.Event) {
		if ev.Kind == harness.EventResult {
			fs.did("result")
		}
	}})
	if err != nil || !res.OK || res.Text != "STORED" {
		t.Fatalf("control: %+v %v", res, err)
	}
	if err := good.Close(); err != nil {
		t.Fatal(err)
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	ops := strings.Join(fs.ops, " ")
	// The CLI mirrors its cost state after the result (the control: this
	// run has a write that Close would otherwise settle); a checkpoint
	// follows the last mirrored line, and Close comes last.
	result, last := slices.Index(fs.ops, "result"), slices.Index(fs.ops, "mirror")
	for i, op := range fs.ops {
		if op == "mirror" {
			last = i
		}
	}
	if result < 0 || last < result {
		t.Fatalf("store ops %s: want a line mirrored after the result", ops)
	}
	if !slices.Contains(fs.ops[last:], "checkpoint") || fs.ops[len(fs.ops)-1] != "close" {
		t.Fatalf("store ops %s: want the last mirrored line settled by a checkpoint, then Close", ops)
	}
}
