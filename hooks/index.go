package hooks

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/flowerhq/flower/internal/atomicfile"
	"github.com/flowerhq/flower/internal/textclip"
)

// indexFolders are the workbench folders INDEX.md lists, with what each is for.
var indexFolders = []struct{ Name, Purpose string }{
	{"scripts", "值得再跑的脚本;第一行写 \"# desc: …\""},
	{"artifacts", "长产出;对话里只给路径和结论"},
	{"notes", "关键决定,一个决定一个文件"},
}

// indexTitle is INDEX.md's first line. The index is injected into the
// system prompt, so it is Chinese like every text the model reads.
const indexTitle = "# 工作台索引"

// indexMore ends a folder's list that was cut at maxEntries.
const indexMore = "- … 还有 %d 个\n"

// IndexFile is the name of the workbench index.
const IndexFile = "INDEX.md"

// Index is the index guard (PostToolUse on Write|Edit): when the written
// file lies inside the workbench root dir, INDEX.md is refreshed so the next
// agent knows the file exists. It never changes the tool result.
func Index(in Input, dir string, maxEntries int) Decision {
	var v struct {
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
	}
	if json.Unmarshal(in.ToolInput, &v) != nil {
		return Decision{Verdict: Pass, Detail: map[string]any{"error": "tool_input is not an object"}}
	}
	p := v.FilePath
	if p == "" {
		p = v.NotebookPath
	}
	if p == "" || !within(dir, p, in.Cwd) {
		return Decision{Verdict: Pass}
	}
	if err := RefreshIndex(dir, maxEntries); err != nil {
		return Decision{Verdict: Pass, Detail: map[string]any{"error": err.Error()}}
	}
	return Decision{Verdict: Pass, Detail: map[string]any{"refreshed": true, "file": p}}
}

// within reports whether path (relative paths resolved against cwd) lies
// inside root, after resolving symlinks where the files exist.
func within(root, path, cwd string) bool {
	if !filepath.IsAbs(path) && cwd != "" {
		path = filepath.Join(cwd, path)
	}
	r, err1 := filepath.Abs(root)
	p, err2 := filepath.Abs(path)
	if err1 != nil || err2 != nil {
		return false
	}
	if rr, err := filepath.EvalSymlinks(r); err == nil {
		r = rr
	}
	if pd, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		p = filepath.Join(pd, filepath.Base(p))
	}
	rel, err := filepath.Rel(r, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// RefreshIndex rewrites root/INDEX.md from the files in scripts/, artifacts/
// and notes/ (newest first, at most maxEntries per folder; scripts with
// their description). The file is only rewritten when its text changes,
// and never when INDEX.md is a symlink or resolves outside root.
func RefreshIndex(root string, maxEntries int) error {
	if maxEntries <= 0 {
		maxEntries = DefaultMaxIndexEntries
	}
	var b strings.Builder
	b.WriteString(indexTitle + "\n\n")
	fmt.Fprintf(&b, "工作台: %s\n", root)
	for _, f := range indexFolders {
		entries, err := listFolder(filepath.Join(root, f.Name))
		if err != nil {
			return fmt.Errorf("hooks: refresh index: %w", err)
		}
		fmt.Fprintf(&b, "\n## %s/(%s)\n\n", f.Name, f.Purpose)
		if len(entries) == 0 {
			b.WriteString("(空)\n")
			continue
		}
		for i, e := range entries {
			if i == maxEntries {
				fmt.Fprintf(&b, indexMore, len(entries)-maxEntries)
				break
			}
			rel := f.Name + "/" + e.name
			switch {
			case f.Name == "scripts":
				if d := ScriptDesc(filepath.Join(root, rel)); d != "" {
					fmt.Fprintf(&b, "- %s — %s\n", rel, d)
					continue
				}
				fmt.Fprintf(&b, "- %s\n", rel)
			default:
				fmt.Fprintf(&b, "- %s (%s)\n", rel, humanSize(e.size))
			}
		}
	}
	path := filepath.Join(root, IndexFile)
	if err := confined(root, path); err != nil {
		return fmt.Errorf("hooks: refresh index: %w", err)
	}
	if old, err := os.ReadFile(path); err == nil && string(old) == b.String() {
		return nil
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return fmt.Errorf("hooks: refresh index: %w", err)
	}
	if err := atomicfile.Write(path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("hooks: refresh index: %w", err)
	}
	return nil
}

type indexEntry struct {
	name  string
	size  int64
	mtime int64
}

// listFolder lists the regular files under dir (recursively, hidden files
// skipped), newest first. A missing folder is empty.
func listFolder(dir string) ([]indexEntry, error) {
	var out []indexEntry
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && p == dir {
				return filepath.SkipDir
			}
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // vanished meanwhile
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, indexEntry{name: filepath.ToSlash(rel), size: info.Size(), mtime: info.ModTime().UnixNano()})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].mtime != out[j].mtime {
			return out[i].mtime > out[j].mtime
		}
		return out[i].name < out[j].name
	})
	return out, nil
}

func humanSize(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
}

// ScriptDesc returns a script's self-description: the text after "desc:"
// in a "#", "//" or "--" comment within the first 8 lines; else the first
// non-empty comment (a shebang does not count); else the first line of a
// Python docstring. At most 100 characters; "" if there is none.
func ScriptDesc(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	var lines []string
	for i := 0; i < 8 && sc.Scan(); i++ {
		lines = append(lines, strings.TrimSpace(sc.Text()))
	}
	comment := func(l string) (string, bool) {
		for _, p := range []string{"#", "//", "--"} {
			if strings.HasPrefix(l, p) {
				return strings.TrimSpace(strings.TrimPrefix(l, p)), true
			}
		}
		return "", false
	}
	for _, l := range lines {
		if c, ok := comment(l); ok && strings.HasPrefix(c, "desc:") {
			return describe(strings.TrimPrefix(c, "desc:"))
		}
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "#!") {
			continue
		}
		if c, ok := comment(l); ok && c != "" {
			return describe(c)
		}
	}
	for i, l := range lines {
		for _, q := range []string{`"""`, `'''`} {
			if !strings.HasPrefix(l, q) {
				continue
			}
			doc := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(l, q), q))
			if doc == "" && i+1 < len(lines) {
				doc = lines[i+1]
			}
			return describe(doc)
		}
	}
	return ""
}

// describe is an index entry's description: at most 100 characters,
// trimmed.
func describe(s string) string { return strings.TrimSpace(textclip.Runes(strings.TrimSpace(s), 100)) }
