package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/flowerhq/flower/hooks"
)

// Workbench is the spill-over working directory of a run:
// scripts/, artifacts/, notes/ (plus spill/ for the spill guard) and an
// INDEX.md that is injected into the system prompt, so the agent knows every
// turn what it has at hand.
type Workbench struct {
	Workspace       string
	Dirname         string // default ".flower"
	MaxIndexEntries int    // default 40
	// Home places the workbench outside the workspace (isolation); agents
	// then reach it by absolute path.
	Home string
	// Protected are more paths the fence keeps the agents' write tools off
	// (the flow's brief, goal and Q&A log); ProtectedPaths adds the
	// workbench's own.
	Protected []string
}

// protectedPaths are the workbench paths only flower writes: the handoff
// notes (notes/交接-*.md and notes/archive/), INDEX.md, spill/, and
// Protected.
func (w *Workbench) protectedPaths() []string {
	return append(hooks.WorkbenchRecords(w.Root()), w.Protected...)
}

// NewWorkbench returns a workbench with the defaults: <workspace>/.flower,
// an index of at most 40 entries.
func NewWorkbench(workspace string) *Workbench {
	return &Workbench{Workspace: workspace, Dirname: ".flower", MaxIndexEntries: 40}
}

// Root is Home when set, else <workspace>/<dirname>.
func (w *Workbench) Root() string {
	if w.Home != "" {
		return w.Home
	}
	d := w.Dirname
	if d == "" {
		d = ".flower"
	}
	return filepath.Join(w.Workspace, d)
}

// External reports whether the workbench lies outside the workspace.
func (w *Workbench) External() bool {
	rel, err := filepath.Rel(w.Workspace, w.Root())
	return w.Home != "" && (err != nil || strings.HasPrefix(rel, ".."))
}

// Scripts is <root>/scripts: scripts worth running again.
func (w *Workbench) Scripts() string { return filepath.Join(w.Root(), "scripts") }

// Artifacts is <root>/artifacts: results over 2000 characters.
func (w *Workbench) Artifacts() string { return filepath.Join(w.Root(), "artifacts") }

// Notes is <root>/notes: one file per key decision, and the handoffs.
func (w *Workbench) Notes() string { return filepath.Join(w.Root(), "notes") }

// Spill is <root>/spill, where the spill guard writes long tool output.
func (w *Workbench) Spill() string { return filepath.Join(w.Root(), "spill") }

// indexPath is <root>/INDEX.md.
func (w *Workbench) indexPath() string { return filepath.Join(w.Root(), "INDEX.md") }

// ensure creates the directories and the index.
func (w *Workbench) ensure() error {
	for _, d := range []string{w.Scripts(), w.Artifacts(), w.Notes()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("harness: workbench: %w", err)
		}
	}
	return w.Refresh()
}

// Index returns INDEX.md's text after refreshing it: the listing of
// scripts/ (with their "# desc:"), artifacts/ and notes/, written by the same
// code the index guard (flower-hook index) runs, so both agree byte for byte.
func (w *Workbench) Index() string {
	if err := w.Refresh(); err != nil {
		return "# Workbench index\n\n(unavailable: " + err.Error() + ")\n"
	}
	data, err := os.ReadFile(w.indexPath())
	if err != nil {
		return "# Workbench index\n\n(unavailable: " + err.Error() + ")\n"
	}
	return string(data)
}

// Refresh rewrites INDEX.md (hooks.RefreshIndex).
func (w *Workbench) Refresh() error {
	if err := hooks.RefreshIndex(w.Root(), w.MaxIndexEntries); err != nil {
		return fmt.Errorf("harness: workbench: %w", err)
	}
	return nil
}

// Describe returns a script's self-description: a "# desc:" line (also
// "//" and "--") within the first 8 lines, else the first non-empty comment
// or the first docstring line, cut to 100 characters (hooks.ScriptDesc).
func Describe(path string) string { return hooks.ScriptDesc(path) }

// PromptBlock is the text injected into the system prompt: where the
// workbench is, its three rules, and the current index.
func (w *Workbench) PromptBlock() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Workbench: %s\n\n", w.Root())
	b.WriteString("1. Scripts you may run a second time go to scripts/, first line `# desc: <one sentence>`.\n")
	b.WriteString("2. Results over 2000 characters go to artifacts/; in the conversation write only the path and the conclusion.\n")
	b.WriteString("3. Key decisions go to notes/, one file per decision.\n")
	if w.External() {
		fmt.Fprintf(&b, "\nThe workbench lies outside the workspace: access it by absolute path (%s).\n", w.Root())
	}
	b.WriteString("\n")
	b.WriteString(w.Index())
	return b.String()
}
