package sessionstore_test

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flowerhq/flower/sessionstore"
)

func TestZZTiming(t *testing.T) {
	db, file, _ := benchStore(t)
	ws := t.TempDir()
	s, _ := sessionstore.Open(db, benchPolicies(ws)...)
	defer s.Close()
	for i := 0; i < 3; i++ {
		t0 := time.Now()
		entries, _ := s.Load(t.Context(), benchKey)
		t1 := time.Now()
		out, _, _ := s.LoadForResume(t.Context(), benchKey)
		t2 := time.Now()
		f, _ := os.Create(filepath.Join(ws, "x.jsonl"))
		w := bufio.NewWriterSize(f, 1<<20)
		for _, e := range out {
			w.Write(e)
			w.WriteByte('\n')
		}
		w.Flush()
		f.Close()
		t3 := time.Now()
		s.Materialize(t.Context(), benchKey, filepath.Join(ws, "cfg"))
		t4 := time.Now()
		data, _ := os.ReadFile(file)
		t5 := time.Now()
		t.Logf("load %v  loadForResume(incl load) %v  write %v  materialize %v  readfile %v (%d entries, %d bytes)", t1.Sub(t0), t2.Sub(t1), t3.Sub(t2), t4.Sub(t3), t5.Sub(t4), len(entries), len(data))
	}
}

func TestZZMakeDB(t *testing.T) {
	db, _, _ := benchStore(t)
	data, _ := os.ReadFile(db)
	os.WriteFile("/tmp/zz.db", data, 0o644)
}
