package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	flower "github.com/flowerhq/flower"
	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// fakeClaude writes a shell script that stands in for claude.
func fakeClaude(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// bareOptions are Options that need no scripted model.
func bareOptions(t *testing.T) harness.Options {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	os.MkdirAll(ws, 0o755)
	o := harness.NewOptions(ws)
	flower.Defaults(&o)
	o.RunDir = filepath.Join(root, "runs")
	o.Env = []string{"HOME=" + filepath.Join(root, "home"), "PATH=" + os.Getenv("PATH"), "ANTHROPIC_API_KEY=sk-test", "ANTHROPIC_BASE_URL=http://127.0.0.1:1"}
	o.HookPath = hookBinary(t)
	o.Resilience.BaseDelay = 10 * time.Millisecond
	return o
}

// groupGone waits up to 3s for every live (non-zombie) member of the
// process group pgid to disappear.
func groupGone(pgid int) bool {
	return testbed.Eventually(3*time.Second, func() bool {
		return syscall.Kill(-pgid, 0) == syscall.ESRCH || len(liveMembers(pgid)) == 0
	})
}

// assertGroupGone fails t unless the process group whose id a scripted
// tool wrote to pidfile is gone (within groupGone's wait).
func assertGroupGone(t *testing.T, pidfile string) {
	t.Helper()
	data, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pgid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if pgid <= 1 || !groupGone(pgid) {
		t.Errorf("process group %d is still alive", pgid)
	}
}

// procStat is one /proc/<pid>/stat line: the pid, "pid (comm)", and the
// fields after the command name (state ppid pgrp …).
type procStat struct {
	pid    string
	head   string
	fields []string
}

// allProcs reads /proc/*/stat.
func allProcs() []procStat {
	var out []procStat
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(data)
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			out = append(out, procStat{pid: e.Name(), head: s[:i+1], fields: strings.Fields(s[i+1:])})
		}
	}
	return out
}

// liveMembers lists the non-zombie processes of group pgid.
func liveMembers(pgid int) []string {
	var out []string
	for _, p := range allProcs() {
		if len(p.fields) > 2 && p.fields[2] == strconv.Itoa(pgid) && p.fields[0] != "Z" {
			out = append(out, p.pid+":"+p.head)
		}
	}
	return out
}

func TestRun_BrokenChild(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		script  string
		wantErr string
	}{
		{"dies before init", `echo $$ > "$PIDFILE"; sleep 300 & echo "boom: no config" >&2; exit 3`, "exited before system/init (exit 3): boom: no config"},
		{"garbage on stdout", `echo $$ > "$PIDFILE"; sleep 300 & echo "Welcome to claude! this is not json"; sleep 300`, "not stream-json"},
		{"silent hang", `echo $$ > "$PIDFILE"; sleep 300`, "no system/init from claude within 1s"},
		{"killed by a signal after init", `echo $$ > "$PIDFILE"; echo '{"type":"system","subtype":"init","session_id":"s-1"}'; sleep 300 & kill -9 $$`, "exited without a result (killed by signal killed)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := bareOptions(t)
			pidfile := filepath.Join(t.TempDir(), "pid")
			o.Env = append(o.Env, "PIDFILE="+pidfile)
			o.SkipGuardsLive = true // a fake claude runs no hooks
			o.Claude = fakeClaude(t, tc.script)
			o.StartTimeout = time.Second
			o.Resilience.MaxAttempts = 1
			rt, err := harness.New(t.Context(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			start := time.Now()
			res, err := rt.Run(runCtx(t), harness.NewAgentSpec("plain", "x"), "hi", harness.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.OK || !strings.Contains(res.Error, tc.wantErr) {
				t.Fatalf("error = %q, want it to contain %q", res.Error, tc.wantErr)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %s", d)
			}
			assertGroupGone(t, pidfile)
		})
	}
}

func TestNew_Preconditions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		mod     func(o *harness.Options)
		wantErr error
		wantMsg string
	}{
		{"missing claude", func(o *harness.Options) { o.Claude = "/nonexistent/claude" }, harness.ErrClaudeNotFound, "/nonexistent/claude"},
		{"missing credentials", func(o *harness.Options) { o.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")} }, harness.ErrNoCredentials, "ANTHROPIC_API_KEY"},
		{"credentials from .env", func(o *harness.Options) {
			o.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
			os.WriteFile(filepath.Join(o.Workspace, ".env"), []byte("ANTHROPIC_API_KEY=sk-from-dotenv\n"), 0o600)
		}, nil, ""},
		{"logged-in config dir", func(o *harness.Options) {
			home := t.TempDir()
			os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
			os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte(`{"claudeAiOauth":{"accessToken":"a","refreshToken":"SECRET_REFRESH"}}`), 0o600)
			o.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
		}, nil, ""},
		{"login without a credentials copy", func(o *harness.Options) {
			home := t.TempDir()
			os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
			os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte(`{"claudeAiOauth":{"accessToken":"a"}}`), 0o600)
			o.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
			o.CopyCredentials = nil
		}, harness.ErrNoCredentials, "Options.CopyCredentials"},
		{"bedrock switch", func(o *harness.Options) {
			o.Env = []string{"HOME=" + t.TempDir(), "CLAUDE_CODE_USE_BEDROCK=1"}
		}, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := bareOptions(t)
			o.SkipGuardsLive = true // a fake claude runs no hooks
			o.Claude = fakeClaude(t, "exit 0")
			tc.mod(&o)
			rt, err := harness.New(t.Context(), o)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				defer rt.Close()
				// Portable mode copies a login without its refresh token.
				data, err := os.ReadFile(filepath.Join(rt.RunDir(), "claude-config", ".credentials.json"))
				if err == nil && strings.Contains(string(data), "SECRET_REFRESH") {
					t.Errorf("refresh token copied into the run's config dir: %s", data)
				}
				if tc.name == "logged-in config dir" && !strings.Contains(string(data), "accessToken") {
					t.Errorf("the login was not copied into the run's config dir (%v): %s", err, data)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("New error = %v, want %v mentioning %q", err, tc.wantErr, tc.wantMsg)
			}
		})
	}
}

func TestRun_CancelKillsTheGroup(t *testing.T) {
	t.Parallel()
	pidfile := filepath.Join(t.TempDir(), "pid")
	slow := &scripted.Block{Name: "Bash", Input: json.RawMessage(`{"command":"echo $$ > ` + pidfile + ` && sleep 60","description":"wait"}`)}
	b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main", Replies: []scripted.Reply{{ToolUse: slow}, {Text: "late"}}}}})
	rt := newRuntime(t, b, nil)
	spec := harness.NewAgentSpec("worker", "x")
	spec.AllowedTools = []string{"Bash"}
	ctx, cancel := context.WithCancel(runCtx(t))
	// Cancel once the tool runs its long command: the shell whose pid the
	// tool wrote is alive and has started its sleep.
	go func() {
		if testbed.Eventually(time.Minute, func() bool {
			data, _ := os.ReadFile(pidfile)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
			return pid > 0 && len(childrenOf(pid)) > 0
		}) {
			cancel()
		}
	}()
	start := time.Now()
	res, err := rt.Run(ctx, spec, "wait a minute", harness.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || !strings.Contains(res.Error, "cancelled") || time.Since(start) > 30*time.Second {
		t.Fatalf("result after %s: %+v", time.Since(start), res)
	}
	data, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if !testbed.Eventually(3*time.Second, func() bool { return syscall.Kill(pid, 0) == syscall.ESRCH }) {
		t.Fatalf("the tool's shell %d outlived the step", pid)
	}
}

func TestRun_LargeStreamLine(t *testing.T) {
	t.Parallel()
	o := bareOptions(t)
	o.SkipGuardsLive = true // a fake claude runs no hooks
	o.Claude = fakeClaude(t, `read -r _
echo '{"type":"system","subtype":"init","session_id":"big-1"}'
printf '{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"'
head -c 5000000 /dev/zero | tr '\0' a
printf '"}]},"parent_tool_use_id":null}\n'
echo '{"type":"result","subtype":"success","is_error":false,"result":"BIG_OK","num_turns":1,"total_cost_usd":0.01,"session_id":"big-1"}'`)
	rt, err := harness.New(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	res, err := rt.Run(runCtx(t), harness.NewAgentSpec("plain", "x"), "hi", harness.RunOptions{})
	if err != nil || !res.OK || res.Text != "BIG_OK" || res.SessionID != "big-1" {
		t.Fatalf("%+v %v", res, err)
	}
	for _, e := range readEvents(t, rt.EventsPath()) {
		if len(e.Raw) > 1<<20 {
			t.Errorf("events.jsonl keeps a %d-byte raw line", len(e.Raw))
		}
	}
}
