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
		return indexUnavailable(err)
	}
	data, err := os.ReadFile(w.indexPath())
	if err != nil {
		return indexUnavailable(err)
	}
	return string(data)
}

// indexUnavailable stands in for an index that cannot be read (its title
// is the one hooks.RefreshIndex writes).
func indexUnavailable(err error) string {
	return "# 工作台索引\n\n(读不到: " + err.Error() + ")\n"
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

// workbenchHeading is the prompt block's first line (%s: the root).
const workbenchHeading = "## 工作台: %s"

// externalNote tells the agents to reach a workbench outside the
// workspace by absolute path (%s: the root).
const externalNote = "\n工作台在工作区之外:用绝对路径访问它(%s)。\n"

// PromptBlock is the text injected into the system prompt: where the
// workbench is, its three rules, and the current index (Chinese, like
// every text the model reads).
func (w *Workbench) PromptBlock() string {
	var b strings.Builder
	fmt.Fprintf(&b, workbenchHeading+"\n\n", w.Root())
	b.WriteString("1. 第二次还要跑的脚本写到 scripts/,第一行写 `# desc: <一句话说明>`。\n")
	b.WriteString("2. 超过 2000 字的产出写到 artifacts/,对话里只给路径和结论。\n")
	b.WriteString("3. 关键决定写到 notes/,一个决定一个文件。\n")
	if w.External() {
		fmt.Fprintf(&b, externalNote, w.Root())
	}
	b.WriteString("\n")
	b.WriteString(w.Index())
	return b.String()
}
