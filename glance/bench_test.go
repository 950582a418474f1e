package glance

import (
	"sync"
	"testing"
)

// BenchmarkIsEphemeral measures the classifier on the test corpus: all of
// it, the everyday reads alone (every one is fully parsed and checked) and
// the refused commands alone. cmds/s is the throughput figure (target:
// at least 100,000 commands a second).
func BenchmarkIsEphemeral(b *testing.B) {
	for _, c := range []struct {
		name   string
		corpus []string
	}{
		{"all", allCases()},
		{"read-only", readOnlyCommands},
		{"refused", refusedCases()},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				IsEphemeral(c.corpus[n%len(c.corpus)])
				n++
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "cmds/s")
		})
	}
}

// BenchmarkFirstClassification is what a flower-hook process pays on its
// first glance: the verb tables built on first use (nothing is built at
// init), then one classification. Compare BenchmarkIsEphemeral for the
// cost once the tables exist.
func BenchmarkFirstClassification(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		tablesOnce = sync.Once{}
		IsEphemeral("git status")
	}
}
