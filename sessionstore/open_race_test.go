package sessionstore

import (
	"path/filepath"
	"sync"
	"testing"
)

// TestOpenConcurrentlyOnANewFile: eight openers racing to create and switch
// one new database to WAL all succeed (regression: eight `flower step`
// processes in one fresh run dir, one failed with "database is locked").
func TestOpenConcurrentlyOnANewFile(t *testing.T) {
	for round := 0; round < 10; round++ {
		path := filepath.Join(t.TempDir(), "sessions.db")
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := Open(path)
				if err != nil {
					errs <- err
					return
				}
				errs <- s.Close()
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}
