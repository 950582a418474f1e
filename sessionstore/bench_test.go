package sessionstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flowerhq/flower/sessionstore"
	"github.com/flowerhq/flower/testkit/testbed"
)

// genTranscript writes a synthetic CLI-shaped transcript of n lines (seeded,
// so every run gets the same file): a fifth tool_use lines, each followed by
// its tool_result line (content log-uniform 0.5–10 KB, duplicated in
// toolUseResult.stdout as the CLI does for Bash, with quotes, backslashes and
// non-ASCII text), then assistant text, thinking, prompts and attachment
// lines. A third of the commands are ephemeral, one call in a hundred is a
// denied Write, and the last tool_use has no result (an orphan to repair).
func genTranscript(path string, n int) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(42, 42))
	words := []string{"alpha", "βeta", "\"quoted\"", `back\slash`, "日本語", "emoji😀", "tab\there", "path/to/file.go", "ok", "{json}"}
	text := func(size int) string {
		var b strings.Builder
		for b.Len() < size {
			b.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(12) == 0 {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		}
		return b.String()
	}
	commands := []string{"ls -la", "git status", "git diff HEAD~1", "cat main.go", "go test ./...", "make build", "npm run lint", "python3 tool.py", "grep -rn TODO ."}
	parent := "null"
	sid := "bench-session"
	line := 0
	emit := func(v map[string]any) error {
		line++
		uuid := fmt.Sprintf("00000000-0000-4000-8000-%012d", line)
		head := fmt.Sprintf(`{"parentUuid":%s,"isSidechain":false,"userType":"external","cwd":"/home/u/ws","sessionId":%q,"version":"2.1.328","gitBranch":"main",`, parent, sid)
		body, err := json.Marshal(v)
		if err != nil {
			return err
		}
		parent = `"` + uuid + `"`
		fmt.Fprintf(w, `%s%s,"uuid":%q,"timestamp":"2026-11-30T01:00:00.000Z"}`+"\n", head, body[1:len(body)-1], uuid)
		return nil
	}
	msg := 0
	assistant := func(block map[string]any) error {
		msg++
		return emit(map[string]any{"type": "assistant", "message": map[string]any{
			"id": fmt.Sprintf("msg_%06d", msg), "role": "assistant", "model": "claude-opus-5-5", "content": []any{block}}})
	}
	for line < n-1 {
		r := rng.Float64()
		var err error
		switch {
		case r < 0.27: // a tool call and its result: two lines
			id := fmt.Sprintf("toolu_%06d", line)
			cmd := commands[rng.IntN(len(commands))]
			denied := rng.IntN(100) == 0
			if denied {
				err = assistant(map[string]any{"type": "tool_use", "id": id, "name": "Write", "input": map[string]any{"file_path": "/etc/x", "content": text(200)}})
			} else {
				err = assistant(map[string]any{"type": "tool_use", "id": id, "name": "Bash", "input": map[string]any{"command": cmd, "description": text(80)}})
			}
			if err != nil || line >= n-1 {
				break
			}
			if denied {
				err = emit(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{map[string]any{
					"type": "tool_result", "tool_use_id": id, "is_error": true, "content": "Claude requested permissions to write to /etc/x, but you haven't granted it yet."}}},
					"toolUseResult": "Error: denied", "toolDenialKind": "user-rejected", "permissionDecision": map[string]any{"decision": "reject"}})
				break
			}
			size := int(500 * math.Pow(20, rng.Float64())) // log-uniform 0.5–10 KB
			out := text(size)
			err = emit(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{map[string]any{
				"tool_use_id": id, "type": "tool_result", "content": out, "is_error": false}}},
				"toolUseResult": map[string]any{"stdout": out, "stderr": "", "interrupted": false, "isImage": false}})
		case r < 0.55:
			err = assistant(map[string]any{"type": "text", "text": text(300 + rng.IntN(2500))})
		case r < 0.70:
			err = assistant(map[string]any{"type": "thinking", "thinking": text(500 + rng.IntN(3000)), "signature": strings.Repeat("s", 200)})
		case r < 0.76:
			err = emit(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text(100 + rng.IntN(600))}})
		default:
			err = emit(map[string]any{"type": "attachment", "attachment": map[string]any{"type": "date", "content": text(200 + rng.IntN(1200))}})
		}
		if err != nil {
			return 0, err
		}
	}
	// The session was killed mid-call: the last tool_use has no result.
	if err := assistant(map[string]any{"type": "tool_use", "id": "toolu_last", "name": "Bash", "input": map[string]any{"command": "make test"}}); err != nil {
		return 0, err
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

var benchKey = sessionstore.Key{ProjectKey: "bench", SessionID: "bench-session"}

// benchStore generates the 20,000-line transcript and imports it.
func benchStore(tb testing.TB) (db, file string, size int64) {
	tb.Helper()
	dir := tb.TempDir()
	file = filepath.Join(dir, "projects", "bench", "bench-session.jsonl")
	os.MkdirAll(filepath.Dir(file), 0o755)
	size, err := genTranscript(file, 20000)
	if err != nil {
		tb.Fatal(err)
	}
	db = filepath.Join(dir, "sessions.db")
	s, err := sessionstore.Open(db)
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	if n, err := s.Import(context.Background(), file); err != nil || n != 20000 {
		tb.Fatalf("Import = %d, %v", n, err)
	}
	return db, file, size
}

func benchPolicies(ws string) []sessionstore.Option {
	return []sessionstore.Option{sessionstore.WithWorkspace(ws), sessionstore.WithTrim(sessionstore.DefaultTrimPolicy())}
}

// BenchmarkMaterialize: load + expire + trim + prune + repair + materialize
// of the 20,000-entry, ~50 MB transcript.
func BenchmarkMaterialize(b *testing.B) {
	db, _, size := benchStore(b)
	ws := b.TempDir()
	s, err := sessionstore.Open(db, benchPolicies(ws)...)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.SetBytes(size)
	for b.Loop() {
		if _, err := s.MaterializeKey(b.Context(), benchKey, filepath.Join(ws, "cfg")); err != nil {
			b.Fatal(err)
		}
	}
}

func init() {
	// gen DB FILE N: write the N-line transcript to FILE and import it into DB.
	helpers["gen"] = func(args []string) int {
		n, _ := strconv.Atoi(args[2])
		if _, err := genTranscript(args[1], n); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		s, err := sessionstore.Open(args[0])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer s.Close()
		if _, err := s.Import(context.Background(), args[1]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	// materialize DB WS CFG: one Materialize, then print seconds and peak RSS.
	helpers["materialize"] = func(args []string) int {
		if f := os.Getenv("SESSIONSTORE_CPUPROFILE"); f != "" {
			out, _ := os.Create(f)
			pprof.StartCPUProfile(out)
			defer pprof.StopCPUProfile()
		}
		start := time.Now()
		s, err := sessionstore.OpenURL(context.Background(), args[0], benchPolicies(args[1])...)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		rep, err := s.MaterializeKey(context.Background(), benchKey, args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		secs := time.Since(start).Seconds()
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
		json.NewEncoder(os.Stdout).Encode(map[string]any{"seconds": secs, "cpu_seconds": cpu, "maxrss_kb": ru.Maxrss, "report": rep})
		return 0
	}
}

const pythonBaseline = `
import json, resource, sys, time
t = time.perf_counter()
n = 0
with open(sys.argv[1], encoding="utf-8") as f:
    for line in f:
        json.loads(line)
        n += 1
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"seconds": time.perf_counter() - t, "lines": n, "cpu_seconds": ru.ru_utime + ru.ru_stime,
                  "maxrss_kb": ru.ru_maxrss}))
`

// BenchmarkStoreResume measures Materialize of the 20,000-entry transcript
// in a fresh process (wall time and peak RSS, best of b.N) beside a plain
// Python json.loads loop over the same JSONL, and reports both with the
// ratios to the targets: ≤ 0.5 s, peak RSS ≤ 2× the file.
// scripts/bench-store.sh runs it with -benchtime=5x.
func BenchmarkStoreResume(b *testing.B) {
	db, file, size := benchStore(b)
	var best, bestPy struct {
		Seconds    float64
		CPUSeconds float64 `json:"cpu_seconds"`
		MaxRSSKB   int64   `json:"maxrss_kb"`
		Report     sessionstore.TrimReport
	}
	best.Seconds, bestPy.Seconds = math.Inf(1), math.Inf(1)
	for i := 0; b.Loop(); i++ {
		ws := b.TempDir()
		out, err := helperCmd(b, "materialize", db, ws, filepath.Join(ws, "cfg")).Output()
		if err != nil {
			b.Fatalf("materialize run %d: %v", i, err)
		}
		var got = best
		if err := json.Unmarshal(out, &got); err != nil {
			b.Fatal(err)
		}
		if got.Seconds < best.Seconds {
			best = got
		}
		if py, err := testbed.Command(b, "python3", "-c", pythonBaseline, file).Output(); err == nil {
			got := bestPy
			json.Unmarshal(py, &got)
			if got.Seconds < bestPy.Seconds {
				bestPy = got
			}
		}
	}
	b.Logf("transcript: 20000 lines, %.1f MB", float64(size)/1e6)
	b.Logf("Go  Materialize (load+expire+trim+prune+repair+write), best of %d: %.3f s wall, %.3f s CPU (whole process), peak RSS %.1f MB",
		b.N, best.Seconds, best.CPUSeconds, float64(best.MaxRSSKB)/1024)
	b.Logf("    report: %+v", best.Report)
	b.Logf("Python json.loads loop (parse only), best of %d: %.3f s wall, %.3f s CPU (whole process), peak RSS %.1f MB",
		b.N, bestPy.Seconds, bestPy.CPUSeconds, float64(bestPy.MaxRSSKB)/1024)
	b.ReportMetric(best.Seconds, "go-s")
	b.ReportMetric(bestPy.Seconds, "python-s")
	b.ReportMetric(best.Seconds/0.5, "go-s/target")
	b.ReportMetric(float64(best.MaxRSSKB*1024)/float64(2*size), "rss/target")
}
