package main

import (
	"os"
	"testing"

	"github.com/flowerhq/flower/testkit/pgtest"
	"github.com/flowerhq/flower/testkit/testbed"
)

// TestMain stops the PostgreSQL test cluster (if a test started one) and
// removes the binaries testbed.BuildBinary built.
func TestMain(m *testing.M) { os.Exit(testbed.Main(func() int { return pgtest.Main(m) })) }

// skipShort skips an end-to-end test that starts no claude but builds and
// runs binaries (why says which): -short is the unit loop, in process only.
func skipShort(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip("e2e: -short is the unit loop; " + why)
	}
}
