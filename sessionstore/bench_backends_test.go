package sessionstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flowerhq/flower/sessionstore"
	"github.com/flowerhq/flower/testkit/pgtest"
)

// backendFigures are one backend's timings in one run.
type backendFigures struct {
	name     string
	append   time.Duration // the transcript appended as a CLI mirrors it: one entry per call
	import_  time.Duration // the transcript appended in one Import
	resume   float64       // best-of-5 fresh-process Materialize, seconds
	resumeKB int64
}

// measureAppend appends the transcript at file into u twice over (entry by
// entry into one key, in one Import into another).
func measureAppend(t testing.TB, name, u, file string) backendFigures {
	f := backendFigures{name: name}
	s, err := sessionstore.OpenURL(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	in, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	key := sessionstore.Key{ProjectKey: "bench-append", SessionID: "bench-session"}
	start := time.Now()
	n := 0
	for sc.Scan() {
		if err := s.Append(t.Context(), key, []json.RawMessage{append([]byte(nil), sc.Bytes()...)}); err != nil {
			t.Fatal(err)
		}
		n++
	}
	f.append = time.Since(start)
	in.Close()
	start = time.Now()
	if n, err := s.Import(context.Background(), file); err != nil || n != 20000 {
		t.Fatalf("%s: Import = %d, %v", name, n, err)
	}
	f.import_ = time.Since(start)
	return f
}

// measureResume times the resume load of the imported transcript in fresh
// processes, best of runs, alternating the backends so both meet the same load
// on a shared machine.
func measureResume(t testing.TB, runs int, urls []string, figs []*backendFigures) {
	for _, f := range figs {
		f.resume = math.Inf(1)
	}
	for i := range runs {
		for j, u := range urls {
			ws := t.TempDir()
			out, err := helperCmd(t, "materialize", u, ws, filepath.Join(ws, "cfg")).Output()
			if err != nil {
				t.Fatalf("%s: materialize run %d: %v", figs[j].name, i, err)
			}
			var got struct {
				Seconds  float64
				MaxRSSKB int64 `json:"maxrss_kb"`
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if got.Seconds < figs[j].resume {
				figs[j].resume, figs[j].resumeKB = got.Seconds, got.MaxRSSKB
			}
		}
	}
}

// BenchmarkStoreBackends measures, in one run, appending the
// 20,000-entry transcript (entry by entry, as mirroring does, and in one
// Import) and its resume load (load + expire + trim + prune + repair +
// materialize in a fresh process, best of b.N) on SQLite and on PostgreSQL
// (the test cluster, over its Unix socket), and reports PostgreSQL's
// figures as ratios of SQLite's. Target: resume load on PostgreSQL ≤ 2×
// SQLite. scripts/bench-store.sh runs it with -benchtime=5x.
func BenchmarkStoreBackends(b *testing.B) {
	dir := b.TempDir()
	file := filepath.Join(dir, "projects", "bench", "bench-session.jsonl")
	os.MkdirAll(filepath.Dir(file), 0o755)
	size, err := genTranscript(file, 20000)
	if err != nil {
		b.Fatal(err)
	}
	sqURL, pgURL := filepath.Join(dir, "sessions.db"), pgtest.URL(b)
	sq := measureAppend(b, "SQLite", sqURL, file)
	pg := measureAppend(b, "PostgreSQL", pgURL, file)
	b.ResetTimer()
	measureResume(b, b.N, []string{sqURL, pgURL}, []*backendFigures{&sq, &pg})
	b.StopTimer()
	b.Logf("transcript: 20000 entries, %.1f MB", float64(size)/1e6)
	b.Logf("%-10s  %14s  %12s  %22s", "backend", "append 1-by-1", "Import", fmt.Sprintf("resume load (best of %d)", b.N))
	for _, f := range []backendFigures{sq, pg} {
		b.Logf("%-10s  %12.2f s  %10.2f s  %10.3f s, RSS %3d MB", f.name, f.append.Seconds(), f.import_.Seconds(), f.resume, f.resumeKB>>10)
	}
	ratio := pg.resume / sq.resume
	b.Logf("PostgreSQL / SQLite: append %.2f×, Import %.2f×, resume load %.2f× (target ≤ 2×)",
		pg.append.Seconds()/sq.append.Seconds(), pg.import_.Seconds()/sq.import_.Seconds(), ratio)
	b.ReportMetric(sq.resume, "sqlite-resume-s")
	b.ReportMetric(pg.resume, "pg-resume-s")
	b.ReportMetric(ratio, "pg/sqlite-resume")
	b.ReportMetric(pg.append.Seconds()/sq.append.Seconds(), "pg/sqlite-append")
	b.ReportMetric(pg.import_.Seconds()/sq.import_.Seconds(), "pg/sqlite-import")
}
