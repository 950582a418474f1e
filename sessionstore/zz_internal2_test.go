package sessionstore

import (
	"context"
	"os"
	"testing"
	"time"
)

func TestZZRows(t *testing.T) {
	db := os.Getenv("ZZDB")
	if db == "" {
		t.Skip()
	}
	for _, mm := range []string{"0", "1073741824"} {
		s, _ := Open(db)
		s.db.SetMaxOpenConns(1)
		s.db.Exec("PRAGMA mmap_size=" + mm)
		key := Key{ProjectKey: "bench", SessionID: "bench-session"}
		ctx := context.Background()
		up, _ := s.lastSeq(ctx, key)
		for i := 0; i < 3; i++ {
			t0 := time.Now()
			n := 0
			s.rowSource(ctx, key, up)(func(b []byte) error { n += len(b); return nil })
			t.Logf("mmap %s rows %v", mm, time.Since(t0))
		}
		s.Close()
	}
}
