package harness

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Workbench is the spill-over working directory of a run (seed Workbench):
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
}

// NewWorkbench returns a workbench with the seed's defaults.
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

// Scripts, Artifacts, Notes and Spill are the workbench's directories.
func (w *Workbench) Scripts() string   { return filepath.Join(w.Root(), "scripts") }
func (w *Workbench) Artifacts() string { return filepath.Join(w.Root(), "artifacts") }
func (w *Workbench) Notes() string     { return filepath.Join(w.Root(), "notes") }
func (w *Workbench) Spill() string     { return filepath.Join(w.Root(), "spill") }

// IndexPath is <root>/INDEX.md.
func (w *Workbench) IndexPath() string { return filepath.Join(w.Root(), "INDEX.md") }

// Ensure creates the directories and the index.
func (w *Workbench) Ensure() error {
	for _, d := range []string{w.Scripts(), w.Artifacts(), w.Notes()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("harness: workbench: %w", err)
		}
	}
	return w.Refresh()
}

type indexEntry struct {
	rel, desc string
	mod       int64
}

// Index returns INDEX.md's text: one line per file of scripts/, artifacts/
// and notes/ (newest first, at most MaxIndexEntries), with its description.
func (w *Workbench) Index() string {
	var entries []indexEntry
	for _, sub := range []string{"scripts", "artifacts", "notes"} {
		base := filepath.Join(w.Root(), sub)
		_ = filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				if d != nil && d.IsDir() && d.Name() == "archive" {
					return filepath.SkipDir
				}
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return nil
			}
			rel, _ := filepath.Rel(w.Root(), p)
			entries = append(entries, indexEntry{rel: filepath.ToSlash(rel), desc: Describe(p), mod: info.ModTime().UnixNano()})
			return nil
		})
	}
	sort.SliceStable(entries, func(i, j int) bool {
		if entries[i].mod != entries[j].mod {
			return entries[i].mod > entries[j].mod
		}
		return entries[i].rel < entries[j].rel
	})
	limit := w.MaxIndexEntries
	if limit <= 0 {
		limit = 40
	}
	var b strings.Builder
	b.WriteString("# Workbench index\n\n")
	if len(entries) == 0 {
		b.WriteString("(empty)\n")
	}
	for i, e := range entries {
		if i == limit {
			fmt.Fprintf(&b, "- … %d more\n", len(entries)-limit)
			break
		}
		if e.desc != "" {
			fmt.Fprintf(&b, "- %s — %s\n", e.rel, e.desc)
		} else {
			fmt.Fprintf(&b, "- %s\n", e.rel)
		}
	}
	return b.String()
}

// Refresh rewrites INDEX.md.
func (w *Workbench) Refresh() error {
	if err := os.MkdirAll(w.Root(), 0o755); err != nil {
		return fmt.Errorf("harness: workbench: %w", err)
	}
	if err := writeFileAtomic(w.IndexPath(), []byte(w.Index()), 0o644); err != nil {
		return fmt.Errorf("harness: workbench index: %w", err)
	}
	return nil
}

var (
	descRe    = regexp.MustCompile(`^\s*(?:#|//|--)\s*desc:\s*(.+?)\s*$`)
	commentRe = regexp.MustCompile(`^\s*(?:#!|#|//|--)\s*(.*?)\s*$`)
	docRe     = regexp.MustCompile(`^\s*(?:"""|''')\s*(.*?)\s*(?:"""|''')?\s*$`)
)

// Describe returns a file's self-description: a "# desc:" line (also "//"
// and "--") within the first 8 lines; else the first non-empty comment or the
// first line of a docstring; cut to 100 characters.
func Describe(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var lines []string
	for len(lines) < 8 && sc.Scan() {
		lines = append(lines, sc.Text())
	}
	for _, l := range lines {
		if m := descRe.FindStringSubmatch(l); m != nil {
			return cut(m[1], 100)
		}
	}
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "#!") {
			continue
		}
		if m := docRe.FindStringSubmatch(l); m != nil && m[1] != "" {
			return cut(m[1], 100)
		}
		if m := commentRe.FindStringSubmatch(l); m != nil && m[1] != "" {
			return cut(strings.TrimLeft(m[1], "# "), 100)
		}
	}
	return ""
}

func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

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

// writeFileAtomic writes data to a temp file beside path and renames it.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), perm); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
