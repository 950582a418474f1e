package flower_test

import (
	"os"
	"testing"

	"github.com/flowerhq/flower/testkit/testbed"
)

// TestMain removes the binaries testbed.BuildBinary built after the tests.
func TestMain(m *testing.M) { os.Exit(testbed.Main(m.Run)) }
