package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/flowerhq/flower/internal/atomicfile"
	"github.com/flowerhq/flower/internal/textclip"
)

// maxRowText caps the result text a manifest row holds: a longer one is
// written once to its own file under <run_dir>/texts and the row points at
// it, so that every later write of the row (each step rewrites its run's
// row) neither encodes nor stores it again.
const maxRowText = 64 << 10

// textKey names one step result of a Runtime (a step name may repeat).
type textKey struct {
	step    string
	started float64
}

// textsByReference is row with each result text over maxRowText written to
// its file (once per result: w.texts remembers it) and cut in the row;
// w.mu is held.
func (w *runRow) textsByReference(row ManifestRow) (ManifestRow, error) {
	var out []StepResult
	for i, res := range row.Results {
		if len(res.Text) <= maxRowText {
			continue
		}
		if out == nil {
			out = append([]StepResult(nil), row.Results...)
		}
		key := textKey{res.Step, res.StartedAt}
		rel, ok := w.texts[key]
		if !ok {
			rel = filepath.Join("texts", fmt.Sprintf("%s-%d.txt", w.run, len(w.texts)+1))
			if err := writeText(filepath.Join(w.runDir, rel), w.red.String(res.Text)); err != nil {
				return row, fmt.Errorf("harness: result text: %w", err)
			}
			if w.texts == nil {
				w.texts = map[textKey]string{}
			}
			w.texts[key] = rel
		}
		out[i].TextFile, out[i].TextBytes = rel, len(res.Text)
		out[i].Text = res.Text[:textclip.Boundary(res.Text, maxRowText)] + textclip.Ellipsis
	}
	if out != nil {
		row.Results = out
	}
	return row, nil
}

// writeText writes text to path (private, fsync'd, a new file), from the
// string itself: no copy of a text that may be many megabytes.
func writeText(path, text string) error {
	if err := privateDir(filepath.Dir(path)); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = atomicfile.SyncDir(filepath.Dir(path))
	}
	return err
}

// ResultText is the whole text of a step result read from runDir's
// manifest: res.Text itself, or the file it points at (TextFile).
func ResultText(runDir string, res StepResult) (string, error) {
	if res.TextFile == "" {
		return res.Text, nil
	}
	if !filepath.IsLocal(res.TextFile) || !strings.HasPrefix(filepath.ToSlash(res.TextFile), "texts/") {
		return "", fmt.Errorf("harness: result text: %q is not a file of the run dir's texts", res.TextFile)
	}
	data, err := os.ReadFile(filepath.Join(runDir, res.TextFile))
	if err != nil {
		return "", fmt.Errorf("harness: result text: %w", err)
	}
	return string(data), nil
}
