package acceptance

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/flowerhq/flower/internal/envlist"
	"github.com/flowerhq/flower/internal/pinned"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/sessionstore"
	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/testbed"
)

// agentSDKVersion is the @anthropic-ai/claude-agent-sdk release built for
// the pinned claude (its claudeCodeVersion is pinned.ClaudeVersion: the SDK
// and the CLI share the minor number).
const agentSDKVersion = "0.3.328"

var agentSDK struct {
	once sync.Once
	dir  string
	err  string
}

// installAgentSDK installs the SDK with npm, once, into
// testdata/agent-sdk-<version> (git-ignored: later runs reuse it), without
// its bundled native claude (the test passes its own executable). It
// skips loudly when npm or the registry is not there, and fails instead
// under FLOWER_REQUIRE_CLAUDE=1.
func installAgentSDK(t *testing.T) string {
	t.Helper()
	if !strings.HasSuffix(agentSDKVersion, strings.TrimPrefix(pinned.ClaudeVersion, "2.1.")) {
		t.Fatalf("agentSDKVersion %s is not the SDK of claude %s", agentSDKVersion, pinned.ClaudeVersion)
	}
	agentSDK.once.Do(func() {
		dir, err := filepath.Abs(filepath.Join("testdata", "agent-sdk-"+agentSDKVersion))
		if err != nil {
			agentSDK.err = err.Error()
			return
		}
		mod := filepath.Join(dir, "node_modules", "@anthropic-ai", "claude-agent-sdk", "sdk.mjs")
		if _, err := os.Stat(mod); err == nil {
			agentSDK.dir = mod
			return
		}
		tmp := dir + ".tmp"
		os.RemoveAll(tmp)
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			agentSDK.err = err.Error()
			return
		}
		os.WriteFile(filepath.Join(tmp, "package.json"), []byte(`{"name":"flower-agent-sdk-test","private":true}`), 0o644)
		npm := exec.Command("npm", "install", "--prefix", tmp, "--no-audit", "--no-fund", "--loglevel=error",
			"--omit=optional", "--legacy-peer-deps", "@anthropic-ai/claude-agent-sdk@"+agentSDKVersion)
		if out, err := npm.CombinedOutput(); err != nil {
			agentSDK.err = "npm install @anthropic-ai/claude-agent-sdk@" + agentSDKVersion + ": " + err.Error() + "\n" + string(out)
			os.RemoveAll(tmp)
			return
		}
		if err := os.Rename(tmp, dir); err != nil {
			agentSDK.err = err.Error()
			return
		}
		agentSDK.dir = mod
	})
	if agentSDK.err != "" {
		msg := "the Agent SDK could not be installed (is npm on PATH and the registry reachable?): " + agentSDK.err
		if os.Getenv("FLOWER_REQUIRE_CLAUDE") == "1" {
			t.Fatal(msg + " [FLOWER_REQUIRE_CLAUDE=1: not skipping]")
		}
		t.Skip("SKIPPING E2E: " + msg)
	}
	return agentSDK.dir
}

// sdkScript is the Node program of the test: query() with flower claude as
// the executable, the worker agent, Bash allowed; it prints every message
// as one JSON line.
const sdkScript = `const { query } = await import(process.env.SDK_MODULE);
const q = query({ prompt: "please make the file", options: {
  pathToClaudeCodeExecutable: process.env.SDK_EXECUTABLE,
  cwd: process.env.SDK_CWD,
  env: process.env,
  allowedTools: ["Bash"],
  agents: { worker: { description: "does work", prompt: "You are WORKER", tools: ["Bash"] } },
} });
for await (const m of q) console.log(JSON.stringify(m));
`

// TestE2E_AgentSDKDrivesFlowerClaude: the official TypeScript Agent SDK
// (from npm) runs `flower claude` as its pathToClaudeCodeExecutable,
// through the two-line wrapper docs/install.md gives: the stream ends with
// a success result, the guards apply (main thread's Bash denied, the
// subagent's ran), and the session is mirrored into the store. The
// control is the same program with the pinned claude itself as the
// executable: the main thread's Bash runs.
func TestE2E_AgentSDKDrivesFlowerClaude(t *testing.T) {
	flowerbin.SkipShort(t, "it installs the Agent SDK and builds flower")
	t.Parallel()
	testbed.RequireTool(t, "node", "the Agent SDK needs it")
	module := installAgentSDK(t)
	flower := testbed.BuildBinary(t, "./cmd/flower")
	testbed.BuildBinary(t, "./cmd/flower-hook") // beside flower: the embedded plugin uses it
	for _, tc := range []struct {
		name   string
		flower bool
	}{{"flower claude", true}, {"control: plain claude", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bed := delegationBed(t)
			dir := t.TempDir()
			exe := bed.Claude
			if tc.flower {
				exe = filepath.Join(dir, "flower-claude")
				wrapper := "#!/bin/sh\nexec " + flowerbin.ShellQuote(flower) + " claude \"$@\"\n"
				if err := os.WriteFile(exe, []byte(wrapper), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			prog := filepath.Join(dir, "app.mjs")
			if err := os.WriteFile(prog, []byte(sdkScript), 0o644); err != nil {
				t.Fatal(err)
			}
			runDir := filepath.Join(dir, "runs")
			env := append(envlist.Without(bed.Env(), func(k string) bool { return k == "XDG_CACHE_HOME" || strings.HasPrefix(k, "FLOWER_") }),
				"SDK_MODULE="+module, "SDK_EXECUTABLE="+exe, "SDK_CWD="+bed.Workspace,
				"FLOWER_CLAUDE="+bed.Claude, "FLOWER_RUN_DIR="+runDir)
			cmd := testbed.Command(t, "node", prog)
			cmd.Env, cmd.Dir = env, bed.Workspace
			out, err := cmd.Output()
			lines, res := testbed.ParseStream(out)
			if err != nil || res.Get("subtype").String() != "success" || res.Get("result").String() != "GUARDED-REPLY-OK" {
				t.Fatalf("node: %v; %d messages, result %s", err, len(lines), res.Raw)
			}
			if !tc.flower {
				if _, err := os.Stat(filepath.Join(bed.Workspace, "main-wrote-this")); err != nil {
					t.Errorf("control: the main thread's Bash did not run under plain claude: %v", err)
				}
				return
			}
			assertDelegated(t, bed)
			st, err := sessionstore.Open(filepath.Join(runDir, "sessions.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			sessions, err := st.ListSessions(context.Background(), scripted.ProjectDirName(bed.Workspace))
			if err != nil || len(sessions) != 1 || sessions[0].SessionID != res.Get("session_id").String() {
				t.Errorf("mirrored sessions = %+v, %v; want the SDK's session %s", sessions, err, res.Get("session_id"))
			}
		})
	}
}
