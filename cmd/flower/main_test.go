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
