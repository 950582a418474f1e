package harness_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && !strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z")
}

// established counts the open (ESTABLISHED) TCP connections of this
// network namespace with port (decimal) at either end.
func established(port string) int {
	n := 0
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(data), "\n")[1:] {
			fs := strings.Fields(line)
			if len(fs) < 4 || fs[3] != "01" {
				continue
			}
			for _, addr := range fs[1:3] {
				if p, err := strconv.ParseUint(addr[strings.LastIndexByte(addr, ':')+1:], 16, 32); err == nil && strconv.FormatUint(p, 10) == port {
					n++
					break
				}
			}
		}
	}
	return n
}

// TestFlowerStep_KilledFlowerTakesClaudeAlong: kill -9 of a `flower step`
// while claude waits for the model leaves no claude behind (within a
// second), so the tool call the model answers with later never runs. The
// control run, not killed, shows that the scripted tool does run.
func TestFlowerStep_KilledFlowerTakesClaudeAlong(t *testing.T) {
	t.Parallel()
	const delay = 3 * time.Second
	for _, kill := range []bool{true, false} {
		name := map[bool]string{true: "kill -9", false: "control"}[kill]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			inFlight := make(chan struct{}, 1)
			b := testbed.NewFor(t, func(ws string) *scripted.Script {
				touch := &scripted.Block{Name: "Bash", Input: json.RawMessage(`{"command":"touch ` + filepath.Join(ws, "TOOL_RAN") + `","description":"marker"}`)}
				return &scripted.Script{Conversations: []scripted.Conversation{{Name: "main",
					Func: func(r scripted.Request) scripted.Reply {
						if len(r.ToolResults()) > 0 {
							return scripted.Reply{Text: "MARKED"}
						}
						select {
						case inFlight <- struct{}{}:
						default:
						}
						return scripted.Reply{ToolUse: touch, DelayMS: int(delay / time.Millisecond)}
					}}}}
			})
			flower := testbed.BuildBinary(t, "./cmd/flower")
			cmd := flowerStep(t, b, flower, hookBinary(t), filepath.Join(filepath.Dir(b.Workspace), "runs"), "--role", "worker", "mark it")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-inFlight:
			case <-runCtx(t).Done():
				t.Fatalf("the model never saw a request\n%s", out.String())
			}
			marker := filepath.Join(b.Workspace, "TOOL_RAN")
			if !kill {
				if err := cmd.Wait(); err != nil {
					t.Fatalf("flower step: %v\n%s", err, out.String())
				}
				if _, err := os.Stat(marker); err != nil {
					t.Fatalf("control: the scripted tool did not run: %v\n%s", err, out.String())
				}
				return
			}
			claudes := childrenOf(cmd.Process.Pid)
			if len(claudes) != 1 {
				t.Fatalf("flower has %d children, want claude alone: %v", len(claudes), claudes)
			}
			claude := claudes[0]
			syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
			if !testbed.Eventually(time.Second, func() bool { return !alive(claude) }) {
				t.Fatalf("claude (pid %d) outlived flower by a second", claude)
			}
			if m := liveMembers(claude); len(m) > 0 {
				t.Errorf("claude's group outlived flower: %v", m)
			}
			// The model answers a request on its connection only (a closed
			// one ends the delayed reply unsent): once no connection to the
			// model is left, nothing can receive the tool call, let alone
			// run it.
			port := b.Model.Addr()[strings.LastIndexByte(b.Model.Addr(), ':')+1:]
			if !testbed.Eventually(10*time.Second, func() bool { return established(port) == 0 }) {
				t.Fatalf("%d connections to the model outlived flower and claude", established(port))
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the scripted tool ran after flower was killed")
			}
		})
	}
}

// TestRun_ResultEndsTheStep: a claude that prints its result and then does
// not exit is killed after the grace, and the step keeps the result: ok
// with its text, well within a minute (the context's deadline would
// otherwise end it as cancelled).
func TestRun_ResultEndsTheStep(t *testing.T) {
	t.Parallel()
	o := bareOptions(t)
	pidfile := filepath.Join(t.TempDir(), "pid")
	o.Env = append(o.Env, "PIDFILE="+pidfile)
	o.SkipGuardsLive = true // a fake claude runs no hooks
	o.Claude = fakeClaude(t, `echo $$ > "$PIDFILE"; read -r prompt
echo '{"type":"system","subtype":"init","session_id":"s-hang"}'
echo '{"type":"result","subtype":"success","is_error":false,"result":"DONE_THEN_HANG","num_turns":1,"total_cost_usd":0.01,"session_id":"s-hang"}'
trap '' TERM; while :; do sleep 1; done`)
	o.Resilience.MaxAttempts = 1
	rt, err := harness.New(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	res, err := rt.Run(ctx, harness.NewAgentSpec("plain", "x"), "hi", harness.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Text != "DONE_THEN_HANG" || res.SessionID != "s-hang" || res.Attempts != 1 {
		t.Fatalf("result = %+v", res)
	}
	assertGroupGone(t, pidfile)
}
