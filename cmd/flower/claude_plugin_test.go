package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowerhq/flower/testkit/testbed"
)

// `flower claude` refuses to start claude when the guards plugin has no
// flower-hook (it is built by scripts/setup.sh, not committed): without it
// the delegate guard could not run. The control with the binary starts
// claude (a stand-in that leaves a marker), so the test can fail.
func TestClaudeDropInRefusesWithoutHookBinary(t *testing.T) {
	flower := testbed.BuildBinary(t, "./cmd/flower")
	dir := t.TempDir()
	marker := filepath.Join(dir, "claude-ran")
	fake := filepath.Join(dir, "claude")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	withBin := guardedPlugin(t)
	noBin := filepath.Join(dir, "plugin")
	if out, err := testbed.Command(t, "cp", "-r", withBin, noBin).CombinedOutput(); err != nil {
		t.Fatalf("copy plugin: %v %s", err, out)
	}
	if err := os.Remove(filepath.Join(noBin, "bin", "flower-hook")); err != nil {
		t.Fatal(err)
	}
	run := func(plugin string) (int, string) {
		cmd := testbed.Command(t, flower, "claude", "-p", "hi")
		cmd.Env = append(os.Environ(), "HOME="+dir, "FLOWER_CLAUDE="+fake, "FLOWER_PLUGIN_DIR="+plugin, "FLOWER_RUN_DIR="+filepath.Join(dir, "runs"))
		cmd.Stdin = strings.NewReader("")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.Run()
		return cmd.ProcessState.ExitCode(), out.String()
	}
	code, out := run(noBin)
	if code == 0 || !strings.Contains(out, "scripts/setup.sh") || !strings.Contains(out, "bin/flower-hook") {
		t.Errorf("without flower-hook: exit %d, output %q; want a refusal naming scripts/setup.sh", code, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("claude was started without the guard binary")
	}
	if code, out := run(withBin); code != 0 {
		t.Fatalf("control: exit %d %s", code, out)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("control: claude was not started")
	}
}
