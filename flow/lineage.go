package flow

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/flowerhq/flower/internal/atomicfile"
)

// LineageFile is the lineage's file name inside the run directory.
const LineageFile = "lineage.json"

// Lineage maps step names to session ids across processes, so that a later
// process can resume_from (or continue) a step of an earlier run. Only
// original step names are remembered, never retry labels (name#round2) or
// judge rounds. The file holds, per workspace and workflow, each step's
// sessions oldest first: two workspaces that share a run dir never see (and
// so never wake or resume) each other's sessions. It is rewritten under a
// file lock (read disk, change own entry, keep the rest), so parallel
// processes in one run_dir do not lose entries.
type Lineage struct {
	Path string
	// Workspace keys the entries (an absolute path; "" is its own key).
	Workspace string
	Workflow  string
}

// lineageDoc is the file's shape: {"workspaces": workspace → workflow →
// step → session ids}. Entries of the older shape (workflow at the top,
// without a workspace) cannot be attributed to a workspace: they are never
// read, and dropped on the next write.
type lineageDoc struct {
	Workspaces map[string]map[string]map[string][]string `json:"workspaces"`
}

// errLineageDamaged marks a lineage file that does not parse.
var errLineageDamaged = errors.New("does not parse")

// NewLineage returns the lineage of workflow in workspace, kept in
// <runDir>/lineage.json.
func NewLineage(runDir, workspace, workflow string) *Lineage {
	if workspace != "" {
		if abs, err := filepath.Abs(workspace); err == nil {
			workspace = abs
		}
	}
	return &Lineage{Path: filepath.Join(runDir, LineageFile), Workspace: workspace, Workflow: workflow}
}

func (l *Lineage) read() (lineageDoc, error) {
	doc := lineageDoc{Workspaces: map[string]map[string]map[string][]string{}}
	b, err := os.ReadFile(l.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return doc, nil
	}
	if err != nil {
		return doc, fmt.Errorf("flow: lineage: %w", err)
	}
	if len(b) == 0 {
		return doc, nil
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return doc, fmt.Errorf("flow: lineage %s: %w: %v", l.Path, errLineageDamaged, err)
	}
	if doc.Workspaces == nil {
		doc.Workspaces = map[string]map[string]map[string][]string{}
	}
	return doc, nil
}

// Remember records sessionID as the latest session of step. Repeating the
// latest id changes nothing.
func (l *Lineage) Remember(step, sessionID string) error {
	if l == nil || step == "" || sessionID == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(l.Path), 0o700); err != nil {
		return fmt.Errorf("flow: lineage: %w", err)
	}
	lk := flock.New(l.Path + ".lock")
	if err := lk.Lock(); err != nil {
		return fmt.Errorf("flow: lineage lock: %w", err)
	}
	defer lk.Unlock()
	doc, err := l.read()
	if errors.Is(err, errLineageDamaged) {
		// Never repaired, a garbled file would start every later wake's
		// sessions fresh: move it aside (once) and start a fresh one.
		aside := l.Path + ".corrupt-" + time.Now().UTC().Format("20060102T150405.000000000Z")
		if rerr := os.Rename(l.Path, aside); rerr != nil {
			return fmt.Errorf("flow: lineage: moving the damaged one aside: %w", rerr)
		}
		fmt.Fprintf(os.Stderr, "flower: warning: %v; moved it to %s and started a fresh one (the steps it named start fresh sessions)\n", err, filepath.Base(aside))
		doc, err = l.read()
	}
	if err != nil {
		return err
	}
	ws := doc.Workspaces[l.Workspace]
	if ws == nil {
		ws = map[string]map[string][]string{}
		doc.Workspaces[l.Workspace] = ws
	}
	wf := ws[l.Workflow]
	if wf == nil {
		wf = map[string][]string{}
		ws[l.Workflow] = wf
	}
	ids := wf[step]
	if len(ids) > 0 && ids[len(ids)-1] == sessionID {
		return nil
	}
	wf[step] = append(ids, sessionID)
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("flow: lineage: %w", err)
	}
	if err := atomicfile.Write(l.Path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("flow: lineage: %w", err)
	}
	return nil
}

// Latest returns the newest session id remembered for step, or "".
func (l *Lineage) Latest(step string) string {
	ids := l.History(step)
	if len(ids) == 0 {
		return ""
	}
	return ids[len(ids)-1]
}

// History returns every session id remembered for step, oldest first.
func (l *Lineage) History(step string) []string {
	if l == nil {
		return nil
	}
	doc, err := l.read()
	if err != nil {
		return nil
	}
	return append([]string(nil), doc.Workspaces[l.Workspace][l.Workflow][step]...)
}
