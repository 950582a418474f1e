package sessionstore_test

import (
	"path/filepath"
	"testing"

	"github.com/flowerhq/flower/sessionstore"
	"github.com/flowerhq/flower/sessionstore/storetest"
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

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store { return openTemp(t) })
}
