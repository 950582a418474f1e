package sessionstore

import (
	"context"
	"os"
	"testing"
	"time"
)

func TestZZInternalTiming(t *testing.T) {
	db := os.Getenv("ZZDB")
	if db == "" {
		t.Skip()
	}
	s, _ := Open(db, WithWorkspace(t.TempDir()))
	defer s.Close()
	key := Key{ProjectKey: "bench", SessionID: "bench-session"}
	ctx := context.Background()
	up, _ := s.lastSeq(ctx, key)
	for i := 0; i < 3; i++ {
		t0 := time.Now()
		n := 0
		s.rowSource(ctx, key, up)(func(b []byte) error { n += len(b); return nil })
		t1 := time.Now()
		sc := newScanner()
		s.rowSource(ctx, key, up)(func(b []byte) error { sc.scan(b); return nil })
		t2 := time.Now()
		rep, _ := s.pipeline(s.rowSource(ctx, key, up), func([]byte) error { return nil })
		t3 := time.Now()
		t.Logf("rows %v  rows+scan %v  pipeline(no write) %v  %d", t1.Sub(t0), t2.Sub(t1), t3.Sub(t2), rep.Trimmed)
	}
}
