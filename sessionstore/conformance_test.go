package sessionstore_test

import (
	"path/filepath"
	"testing"

	"github.com/flowerhq/flower/sessionstore"
	"github.com/flowerhq/flower/sessionstore/storetest"
	"github.com/flowerhq/flower/testkit/pgtest"
)

func openTemp(t *testing.T, opts ...sessionstore.Option) *sessionstore.Store {
	t.Helper()
	s, err := sessionstore.Open(filepath.Join(t.TempDir(), "sessions.db"), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// openPG opens a store on a fresh PostgreSQL database of the test cluster.
func openPG(t *testing.T, opts ...sessionstore.Option) *sessionstore.Store {
	t.Helper()
	s, err := sessionstore.OpenURL(t.Context(), pgtest.URL(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store { return openTemp(t) })
}

// TestConformancePostgres: the same 14 contracts on a real PostgreSQL.
func TestConformancePostgres(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store { return openPG(t) })
}
