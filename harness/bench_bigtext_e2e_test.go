package harness_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	flower "github.com/flowerhq/flower"
	"github.com/flowerhq/flower/harness"
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
