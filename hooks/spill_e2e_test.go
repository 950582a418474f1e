package hooks_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/flowerhq/flower/hooks"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

func TestE2E_SpillKeepsPointerReadBackWholeReadInOwnShape(t *testing.T) {
	t.Parallel()
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	big := bigText(400) + "x" // exactly 20,000 characters
	if len(big) != 20000 {
		t.Fatalf("big is %d chars", len(big))
	}
	var mu sync.Mutex
	var ws string // set once the bed exists; the model reads it when answering
	step := 0
	next := func(r scripted.Request) scripted.Reply {
		mu.Lock()
		defer mu.Unlock()
		step++
		switch step {
		case 1: // after the spilled Bash: read the spill file back
			p := spillPath.FindString(r.Text())
			if p == "" {
				return scripted.Reply{Text: "no spill path"}
			}
			return tool("Read", map[string]any{"file_path": p})
		case 2:
			return tool("Read", map[string]any{"file_path": filepath.Join(ws, "big.txt")})
		case 3:
			return tool("Grep", map[string]any{"pattern": "line", "output_mode": "content", "path": ws})
		}
		return scripted.Reply{Text: "spill done"}
	}
	bed := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main",
		Match:   scripted.Match{FirstUser: "spill test"},
		Replies: []scripted.Reply{bashCall("cat big.txt", "show")},
		Func:    next}}})
	mu.Lock()
	ws = bed.Workspace
	mu.Unlock()
	srv := bed.Model
	putFile(t, bed.Workspace, "big.txt", []byte(big))
	wb := filepath.Join(bed.Workspace, ".flower")
	settings := writeSettings(t, bed.Home, hookEntry{"PostToolUse", hooks.BulkyTools, hook + " spill --dir " + wb})
	run := runClaude(t, bed, nil, "spill test", "--settings", settings, "--allowedTools", "Bash Read Grep")
	if run.Result.Get("result").String() != "spill done" {
		t.Fatalf("exit %d result %s stderr %s", run.ExitCode, run.Result.Raw, run.Stderr)
	}
	reqs := srv.RequestsFor("main")
	if len(reqs) != 5 {
		t.Fatalf("main requests = %d", len(reqs))
	}
	// 1. Bash: pointer + first 400 chars; the full text on disk.
	bash := lastResult(t, reqs[1])
	want := filepath.Join(wb, "spill", hooks.SpillName(big)+".txt")
	_, rest, _ := strings.Cut(bash.Content, "\n")
	if bash.Content != strings.TrimRight(hooks.SpillPointer(want, big), "\n") || rest != strings.TrimRight(big[:hooks.SpillPreviewChars], "\n") {
		// (the CLI trims trailing whitespace off a tool result; the 400th char is a newline)
		t.Errorf("Bash result is not pointer + 400 chars (%d chars): %q", len(bash.Content), bash.Content)
	}
	if b, err := os.ReadFile(want); err != nil || string(b) != big {
		t.Errorf("spill file %s: %d bytes, err %v", want, len(b), err)
	}
	// 2. Reading the spill file back is not spilled again.
	back := lastResult(t, reqs[2])
	if back.IsError || strings.Contains(back.Content, hooks.SpillPointerLead) || !strings.Contains(back.Content, "line 00399") {
		t.Errorf("read-back of the spill file is not whole (%d chars): %.200q", len(back.Content), back.Content)
	}
	// 3. A big Read is spilled in Read's own shape.
	read := lastResult(t, reqs[3])
	if !strings.Contains(read.Content, hooks.SpillPointerLead) || strings.Contains(read.Content, "line 00399") {
		t.Errorf("Read of big.txt not spilled: %.300q", read.Content)
	}
	shaped := false
	for _, l := range run.OfType("user") {
		if c := l.Get("tool_use_result.file.content").String(); l.Get("tool_use_result.type").String() == "text" && strings.HasPrefix(c, hooks.SpillPointerLead) {
			shaped = true
		}
	}
	if !shaped {
		t.Errorf("no Read tool_use_result of shape {type:text, file:{content:[spilled…]}} in the stream")
	}
	// 4. Grep's content mode too.
	if g := lastResult(t, reqs[4]); !strings.Contains(g.Content, hooks.SpillPointerLead) {
		t.Errorf("Grep content not spilled: %.300q", g.Content)
	}
}
