package flow

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/flowerhq/flower/harness"
)

// starterForTest builds a starter flow in a temp workspace.
func starterForTest(t *testing.T) (*Starter, StarterOptions) {
	t.Helper()
	o := StarterOptions{Workspace: t.TempDir(), RunDir: filepath.Join(t.TempDir(), "runs"), Timeout: NoWait,
		ChannelCommand: []string{"/x/flower", "mcp-channel"}}
	st, err := StarterFlow("帮我做计算器", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, o
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// TestStarterChannelLifecycle: building the starter flow starts nothing
// (the socket the specs name, and its folder, do not exist); Open makes the
// socket answer and `flower tell`'s pointer appear; Close removes both, and
// a second Close is harmless; the channel opens again at the same socket.
// Each absence is checked against the presence the step before or after
// shows (the control), and Tell is the client that must (not) get through.
func TestStarterChannelLifecycle(t *testing.T) {
	st, o := starterForTest(t)
	ch := st.Channel
	if Channel(ch) != st.Workflow.Channel {
		t.Fatal("Starter.Channel is not the workflow's channel")
	}
	sock := ch.socketPath()
	coord := st.Steps[2].Spec.MCPServers["flower"].(map[string]any)
	if got := coord["env"].(map[string]string)[ChannelSocketEnv]; got != sock || sock == "" {
		t.Fatalf("the coordinator's spec names socket %q, the channel %q", got, sock)
	}
	pointer := filepath.Join(o.RunDir, "run-1", PointerFile)
	if exists(sock) || exists(filepath.Dir(sock)) || exists(o.RunDir) {
		t.Fatalf("building started something: socket %v, folder %v, run dir %v", exists(sock), exists(filepath.Dir(sock)), exists(o.RunDir))
	}
	if _, err := Tell(t.Context(), o.RunDir, o.Workspace, "hi"); !errors.Is(err, ErrNoFlow) {
		t.Fatalf("before Open, tell reached a flow: %v", err)
	}
	for round := range 2 {
		if err := ch.Open(o.RunDir, "run-1", o.Workspace); err != nil {
			t.Fatalf("round %d: Open: %v", round, err)
		}
		if !exists(sock) || !exists(pointer) {
			t.Fatalf("round %d: after Open: socket %v, pointer %v", round, exists(sock), exists(pointer))
		}
		if r, err := Tell(t.Context(), o.RunDir, o.Workspace, "还要支持乘法"); err != nil || r.Run != "run-1" {
			t.Fatalf("round %d: tell after Open = %+v, %v", round, r, err)
		}
		if err := st.Close(); err != nil {
			t.Errorf("round %d: Close: %v", round, err)
		}
		if exists(sock) || exists(filepath.Dir(sock)) || exists(pointer) {
			t.Errorf("round %d: Close left socket %v, folder %v, pointer %v", round, exists(sock), exists(filepath.Dir(sock)), exists(pointer))
		}
		if _, err := Tell(t.Context(), o.RunDir, o.Workspace, "hi"); !errors.Is(err, ErrNoFlow) {
			t.Errorf("round %d: after Close, tell reached a flow: %v", round, err)
		}
		if err := st.Close(); err != nil {
			t.Errorf("round %d: a second Close: %v", round, err)
		}
	}
	if ch.socketPath() != sock {
		t.Errorf("the socket moved: %s, was %s", ch.socketPath(), sock)
	}
}

// TestOpenFailsWhole: an Open whose pointer cannot be written leaves
// nothing open (the socket is gone again). Control: a run dir that can be
// written opens.
func TestOpenFailsWhole(t *testing.T) {
	for _, broken := range []bool{true, false} {
		h := NewHumanChannel("", "", nil)
		runDir := t.TempDir()
		if broken {
			runDir = filepath.Join(runDir, "file")
			os.WriteFile(runDir, nil, 0o600)
		}
		err := h.Open(runDir, "run-1", t.TempDir())
		if broken != (err != nil) || broken == exists(h.socketPath()) {
			t.Errorf("broken %v: Open = %v, socket there %v", broken, err, exists(h.socketPath()))
		}
		h.Close()
	}
}

// TestStarterRunOpensWhatNobodyOpened: Run opens a channel nobody opened
// for the run (the relay answers a step; nothing is published) and closes
// it after; a channel the caller opened stays open after Run (the control:
// the socket is there until Close).
func TestStarterRunOpensWhatNobodyOpened(t *testing.T) {
	for _, opened := range []bool{false, true} {
		st, o := starterForTest(t)
		if opened {
			if err := st.Channel.Open(o.RunDir, "run-1", o.Workspace); err != nil {
				t.Fatal(err)
			}
		}
		sock := st.Channel.socketPath()
		reached := 0
		f := starterFake(vAchieved)
		f.fn = func(_ harness.AgentSpec, _ string, opts harness.RunOptions) (harness.StepResult, bool) {
			var resp relayResponse
			if err := relay(t.Context(), sock, relayRequest{Op: "inbox"}, &resp); err == nil {
				reached++
			}
			return harness.StepResult{}, false
		}
		c, err := st.Run(t.Context(), f, nil, nil)
		if err != nil || c.Outcome() != nil {
			t.Fatalf("opened %v: Run = %v, %v", opened, err, c.Outcome())
		}
		if reached != len(f.calls) || reached == 0 {
			t.Errorf("opened %v: the relay answered %d of %d runs", opened, reached, len(f.calls))
		}
		if exists(sock) != opened {
			t.Errorf("opened %v: after Run the socket is there: %v", opened, exists(sock))
		}
		if exists(filepath.Join(o.RunDir, "run-1", PointerFile)) != opened {
			t.Errorf("opened %v: pointer published: %v", opened, !opened)
		}
		st.Close()
		if exists(sock) {
			t.Errorf("opened %v: Close left the socket", opened)
		}
	}
}
