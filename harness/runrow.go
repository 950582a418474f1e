package harness

import (
	"os"
	"sync"

	"github.com/flowerhq/flower/internal/redact"
)

// runRow is this Runtime's row of manifest.json: the results of its
// finished steps and the steps under way. Every change is written at once
// (WriteManifestRow's lock and atomic write), so that a flower killed
// mid-step leaves a row RecoverRunDir can mark. Steps running at once in
// one Runtime share it; mu orders their writes.
type runRow struct {
	path      string // <run_dir>/manifest.json
	runDir    string
	run       string
	workspace string
	started   float64
	red       *redact.Redactor

	mu      sync.Mutex
	results []StepResult
	running []RunningStep
	texts   map[textKey]string // big result texts written so far → their file (texts.go)
}

// begin lists step as running and writes the row. The write (two fsyncs)
// runs in the background, because a step begins once its claude is spawned
// and claude boots meanwhile; end must be called after the returned channel
// is closed. A failed write is left to end to report.
func (w *runRow) begin(step string, started float64) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.mu.Lock()
		defer w.mu.Unlock()
		w.running = append(w.running, RunningStep{Step: step, PID: os.Getpid(), StartedAt: started})
		w.write()
	}()
	return done
}

// end adds res to the row's results, takes its step off Running and writes
// the row.
func (w *runRow) end(res StepResult) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.results = append(w.results, res)
	w.running = withoutStep(w.running, res.Step)
	return w.write()
}

// finished are the results of the steps ended so far, in order.
func (w *runRow) finished() []StepResult {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]StepResult(nil), w.results...)
}

// write stores the row as it stands; w.mu is held.
func (w *runRow) write() error {
	row := ManifestRow{Run: w.run, Workspace: w.workspace, StartedAt: w.started, UpdatedAt: unixNow(),
		Results: append([]StepResult(nil), w.results...), Running: append([]RunningStep(nil), w.running...)}
	row, err := w.textsByReference(row)
	if err != nil {
		return err
	}
	return writeRow(w.path, row, w.red)
}

// withoutStep is running without the entry of step (a new slice).
func withoutStep(running []RunningStep, step string) []RunningStep {
	for i, s := range running {
		if s.Step == step {
			return append(running[:i:i], running[i+1:]...)
		}
	}
	return running
}
