//go:build linux

package child

import (
	"path/filepath"
	"testing"
	"time"
)

// TestSupervise_DeadlineKillsTheTree: a supervisor whose deadline file
// (DeadlineEnv) is left unmoved kills its tree once the deadline passes,
// though its lifeline is held (the worker is alive but stopped); the
// control, whose deadline keeps moving, keeps the tool alive.
func TestSupervise_DeadlineKillsTheTree(t *testing.T) {
	for _, moved := range []bool{false, true} {
		t.Run(map[bool]string{false: "deadline passes", true: "control: deadline renewed"}[moved], func(t *testing.T) {
			dir := t.TempDir()
			pidfile, dl := filepath.Join(dir, "pid"), filepath.Join(dir, "deadline")
			if err := WriteDeadline(dl, time.Now().Add(time.Second)); err != nil {
				t.Fatal(err)
			}
			t.Setenv(DeadlineEnv, dl)
			stop := make(chan struct{})
			defer close(stop)
			if moved {
				go func() {
					for {
						select {
						case <-stop:
							return
						case <-time.After(100 * time.Millisecond):
							WriteDeadline(dl, time.Now().Add(time.Second))
						}
					}
				}()
			}
			cmd, _ := superviseShell(t, "subreaper", "echo $$ > "+pidfile+"; exec sleep 300")
			tool := readPID(t, pidfile)
			if moved {
				// Living past the first deadline is what is tested, so the
				// test sleeps past it.
				time.Sleep(2500 * time.Millisecond)
				if _, state, ok := statOf(tool); !ok || state == 'Z' {
					t.Fatal("the tool died although the deadline kept moving")
				}
				return
			}
			if !gone(tool) {
				t.Fatal("the tool outlived the deadline")
			}
			if err := cmd.Wait(); err == nil || cmd.ProcessState.ExitCode() != 137 {
				t.Errorf("the supervisor ended %v, want exit 137", err)
			}
		})
	}
}
