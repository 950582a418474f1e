package hooks_test

import (
	"os"
	"testing"

	"github.com/flowerhq/flower/testkit/testbed"
)

// TestMain removes the binaries testbed.BuildBinary built after the tests,
// and the cache folder their flower-hook kept its seccomp filter in
// (filterCache).
func TestMain(m *testing.M) {
	os.Exit(testbed.Main(func() int {
		code := m.Run()
		if filterCacheDir != "" {
			os.RemoveAll(filterCacheDir)
		}
		return code
	}))
}
