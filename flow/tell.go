package flow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/flowerhq/flower/internal/atomicfile"
)

// PointerFile is the file a running flow leaves in its run's directory
// (<run_dir>/<run>/channel.json) so that `flower tell` can find its channel.
// It holds the channel's socket and the workspace; HumanChannel.Open
// writes it and Close removes it.
const PointerFile = "channel.json"

// ErrNoFlow is returned by Tell when no flow runs in the workspace.
var ErrNoFlow = errors.New("no flow is running")

// runPointer is PointerFile's content.
type runPointer struct {
	Run       string `json:"run"`
	Workspace string `json:"workspace"`
	Socket    string `json:"socket"`
	PID       int    `json:"pid"`
}

// publish writes the channel's pointer to <runDir>/<run>/channel.json
// (0600), so `flower tell` in workspace finds this run. Close removes it.
func (h *HumanChannel) publish(runDir, run, workspace string) error {
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return fmt.Errorf("flow: publish: %w", err)
	}
	b, _ := json.Marshal(runPointer{Run: run, Workspace: ws, Socket: h.socketPath(), PID: os.Getpid()})
	path := filepath.Join(runDir, run, PointerFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("flow: publish: %w", err)
	}
	if err := atomicfile.Write(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("flow: publish: %w", err)
	}
	h.mu.Lock()
	h.pointer = path
	h.mu.Unlock()
	return nil
}

// Receipt says where a told message landed.
type Receipt struct {
	Run  string `json:"run"`
	Step string `json:"step"`
}

// Tell delivers msg to the inbox of the flow running in workspace, found
// through the run pointers in runDir (newest first; a pointer whose socket
// does not answer is a flow that ended). No flow there: ErrNoFlow.
func Tell(ctx context.Context, runDir, workspace, msg string) (Receipt, error) {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return Receipt{}, errors.New("flow: tell: the message is empty")
	}
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return Receipt{}, fmt.Errorf("flow: tell: %w", err)
	}
	for _, p := range livePointers(runDir, ws) {
		var resp relayResponse
		if err := relay(ctx, p.Socket, relayRequest{Op: "tell", Question: Question{Text: msg}}, &resp); err != nil {
			continue // the flow ended without removing its pointer
		}
		if resp.Error != "" {
			return Receipt{}, fmt.Errorf("flow: tell: %s", resp.Error)
		}
		return Receipt{Run: p.Run, Step: resp.Step}, nil
	}
	return Receipt{}, fmt.Errorf("%w in %s (run dir %s)", ErrNoFlow, ws, runDir)
}

// livePointers are the run pointers in runDir for workspace ws, newest first.
func livePointers(runDir, ws string) []runPointer {
	paths, _ := filepath.Glob(filepath.Join(runDir, "*", PointerFile))
	type found struct {
		p   runPointer
		mod int64
	}
	var out []found
	for _, path := range paths {
		b, err := os.ReadFile(path)
		st, serr := os.Stat(path)
		var p runPointer
		if err != nil || serr != nil || json.Unmarshal(b, &p) != nil || p.Workspace != ws || p.Socket == "" {
			continue
		}
		out = append(out, found{p, st.ModTime().UnixNano()})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].mod > out[j].mod })
	ps := make([]runPointer, len(out))
	for i, f := range out {
		ps[i] = f.p
	}
	return ps
}
