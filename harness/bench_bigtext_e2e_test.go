package harness_test

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	flower "github.com/flowerhq/flower"
	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// bigText is the model text of BenchmarkBigText: 50 MB.
const bigText = 50 << 20

// peakRSS is this process's peak resident set (VmHWM), in bytes.
func peakRSS() float64 {
	data, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb * 1024
		}
	}
	return 0
}

// treeBytes is the size of every regular file under dir.
func treeBytes(dir string) float64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if st, err := d.Info(); err == nil {
				n += st.Size()
			}
		}
		return nil
	})
	return float64(n)
}

// BenchmarkBigText runs one step whose claude (a stand-in printing what the
// pinned CLI prints for a turn) answers with a 50 MB text, as an assistant
// line and again as the result, and reports flower's peak RSS (this test
// process: the Runtime runs in it) and the bytes the step wrote to the run
// dir, each per byte of text. Run it alone:
//
//	go test ./harness -run '^$' -bench BigText -benchtime 1x
func BenchmarkBigText(b *testing.B) {
	root := b.TempDir()
	claude := filepath.Join(root, "claude")
	script := fmt.Sprintf(`#!/bin/sh
read -r prompt
echo '{"type":"system","subtype":"init","session_id":"s-big"}'
big() { head -c %d /dev/zero | tr '\0' a; }
printf '{"type":"assistant","message":{"content":[{"type":"text","text":"'; big; printf '"}]},"parent_tool_use_id":null}\n'
printf '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"total_cost_usd":0.01,"session_id":"s-big","result":"'; big; printf '"}\n'
`, bigText)
	if err := os.WriteFile(claude, []byte(script), 0o755); err != nil {
		b.Fatal(err)
	}
	ws := filepath.Join(root, "ws")
	os.MkdirAll(ws, 0o755)
	hook := testbed.BuildBinary(b, "./cmd/flower-hook")
	base := peakRSS()
	var written float64
	for i := 0; i < b.N; i++ {
		o := harness.NewOptions(ws)
		flower.Defaults(&o)
		o.RunDir = filepath.Join(root, fmt.Sprintf("runs%d", i))
		o.Env = []string{"HOME=" + filepath.Join(root, "home"), "PATH=" + os.Getenv("PATH"), "ANTHROPIC_API_KEY=sk-test", "ANTHROPIC_BASE_URL=http://127.0.0.1:1"}
		o.Claude, o.HookPath = claude, hook
		rt, err := harness.New(b.Context(), o)
		if err != nil {
			b.Fatal(err)
		}
		res, err := rt.Run(b.Context(), harness.NewAgentSpec("plain", "x"), "big", harness.RunOptions{})
		rt.Close()
		if err != nil || !res.OK || len(res.Text) != bigText {
			b.Fatalf("step: ok=%v text %d bytes, %v %s", res.OK, len(res.Text), err, res.Error)
		}
		written = treeBytes(o.RunDir)
	}
	b.ReportMetric((peakRSS()-base)/bigText, "rss/text")
	b.ReportMetric(peakRSS()/(1<<20), "peak-MB")
	b.ReportMetric(written/bigText, "written/text")
}

// bigModelText is a model text of n bytes that looks like one: lines with
// quotes and a tab, so that its JSON has escapes to decode.
func bigModelText(n int) string {
	const line = "a line of the \"big\" answer,\twith quotes and a tab\n"
	return strings.Repeat(line, n/len(line)+1)[:n]
}

// stepPeak runs cmd and samples the peak resident set (VmHWM) of its
// process until it exits: flower's own, not claude's (wait4's maxrss would
// count the largest of its reaped descendants). VmHWM only grows, so one
// sample after the peak suffices; the text flower prints keeps it alive
// until the reader has it all. It returns the peak and the bytes printed.
func stepPeak(b *testing.B, cmd *exec.Cmd) (peak, printed float64) {
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	done := make(chan struct{})
	var hwm atomic.Int64
	go func() {
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			if v := vmHWM(status); v > hwm.Load() {
				hwm.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	n, _ := io.Copy(io.Discard, out)
	err = cmd.Wait()
	close(done)
	if os.Getenv("BIGDEBUG") != "" {
		os.Stderr.Write(stderr.Bytes())
	}
	if err != nil {
		b.Fatalf("flower step: %v\n%s", err, stderr.Bytes())
	}
	return float64(hwm.Load()), float64(n)
}

// vmHWM is the VmHWM of a /proc/PID/status file, in bytes (0: gone).
func vmHWM(status string) int64 {
	data, _ := os.ReadFile(status)
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkBigTextStep runs a whole `flower step` process on the real
// claude, whose scripted model answers with a 20 MB and a 50 MB text (with
// escapes, as a model's text has), and reports flower's own peak RSS
// beside the text's size (the goal: at most 3× the text + 60 MB), the
// bytes it wrote to the run dir besides claude's transcripts and the
// session store (the text once, in texts/), and the bytes it printed.
//
//	go test ./harness -run '^$' -bench BigTextStep -benchtime 1x
func BenchmarkBigTextStep(b *testing.B) {
	for _, mb := range []int{20, 50} {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			size := mb << 20
			text := bigModelText(size)
			bed := testbed.New(b, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main",
				Func: func(scripted.Request) scripted.Reply { return scripted.Reply{Text: text} }}}})
			flower, hook := testbed.BuildBinary(b, "./cmd/flower"), testbed.BuildBinary(b, "./cmd/flower-hook")
			var peak, printed, written, all float64
			for i := 0; b.Loop(); i++ {
				runDir := filepath.Join(filepath.Dir(bed.Workspace), fmt.Sprintf("runs%d", i))
				cmd := flowerStep(b, bed, flower, hook, runDir, "big")
				if os.Getenv("BIGDEBUG") != "" {
					cmd.Env = append(cmd.Env, "GODEBUG=gctrace=1")
				}
				peak, printed = stepPeak(b, cmd)
				written, all = ownBytes(runDir), treeBytes(runDir)
			}
			b.ReportMetric(float64(size)/(1<<20), "text-MB")
			b.ReportMetric(peak/(1<<20), "peak-MB")
			b.ReportMetric((peak-60<<20)/float64(size), "(peak-60MB)/text")
			b.ReportMetric(written/float64(size), "written/text")
			b.ReportMetric(all/float64(size), "rundir/text")
			b.ReportMetric(printed/float64(size), "printed/text")
			fmt.Fprintf(os.Stderr, "%d MB text: flower peak RSS %.0f MB (goal ≤ %d MB), run dir %.0f MB (%.0f MB besides transcripts and store), printed %.0f MB\n",
				mb, peak/(1<<20), 3*mb+60, all/(1<<20), written/(1<<20), printed/(1<<20))
		})
	}
}

// ownBytes is the size of the files flower wrote under runDir: all but
// claude's own transcripts (claude-config) and the session store.
func ownBytes(runDir string) float64 {
	var n int64
	filepath.WalkDir(runDir, func(_ string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() && d.Name() == "claude-config" {
			return filepath.SkipDir
		}
		if err == nil && d.Type().IsRegular() && !strings.HasPrefix(d.Name(), "sessions.db") {
			if st, err := d.Info(); err == nil {
				n += st.Size()
			}
		}
		return nil
	})
	return float64(n)
}
