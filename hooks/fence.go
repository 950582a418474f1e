package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// FenceTools is the matcher for the fence guard: the tools that write files.
const FenceTools = WriteOnlyTools

// foldCase is set where file names are usually case-insensitive (macOS,
// Windows): there .flower/notes/目标.MD is the goal, so protected paths are
// matched without regard to case.
var foldCase = runtime.GOOS == "darwin" || runtime.GOOS == "windows"

// maxLinks bounds the symlinks followed while resolving one path (Linux's
// own limit is 40).
const maxLinks = 40

// FenceConfig is the fence guard's configuration.
type FenceConfig struct {
	// Roots are the folders writes may land in: the workspace, the
	// workbench and every --allow-dir. Each is resolved (symlinks
	// followed) before it is compared.
	Roots []string
	// Protected are paths inside the roots that flower keeps for itself
	// (its run dir, the brief, the goal, the Q&A log, the handoff notes):
	// a folder protects everything under it; a last element with * or ?
	// is a pattern (filepath.Match) for the files of its folder.
	Protected []string
	// home is the hook's home folder for "~" (nil: this process's,
	// os.UserHomeDir).
	home func() (string, error)
}

// WorkbenchRecords are the paths of a workbench (root) that only flower
// writes: the handoff notes (notes/交接-*.md, notes/archive/), INDEX.md
// and spill/.
func WorkbenchRecords(root string) []string {
	return []string{filepath.Join(root, "notes", "交接-*.md"), filepath.Join(root, "notes", "archive"),
		filepath.Join(root, IndexFile), spillDir(root)}
}

// StarterRecords are the starter flow's own notes (flow's default brief,
// goal and Q&A log names; a flow test keeps the two lists equal).
var StarterRecords = []string{"需求.md", "目标.md", "问答记录.md"}

// ProjectFence is the fence of a hand-run claude with the plugin: the
// project folder and allow are the roots, and flower's state in the
// project's .flower (runs/, the flow lock, the starter's notes and the
// workbench records) is protected.
func ProjectFence(project string, allow []string) FenceConfig {
	wb := filepath.Join(project, ".flower")
	prot := append([]string{filepath.Join(wb, "runs"), filepath.Join(wb, "flow.lock")}, WorkbenchRecords(wb)...)
	for _, n := range StarterRecords {
		prot = append(prot, filepath.Join(wb, "notes", n))
	}
	return FenceConfig{Roots: append([]string{project}, allow...), Protected: prot}
}

// fencePathField is the tool_input field that names the file each write
// tool changes. Tools not listed here are not the fence's business.
var fencePathField = map[string]string{"Write": "file_path", "Edit": "file_path", "NotebookEdit": "notebook_path"}

// Fence is the fence guard (PreToolUse on Write|Edit|NotebookEdit, main
// thread and subagents alike): a write is denied unless the file it names
// lies, after resolving symlinks, inside one of cfg.Roots and is not
// covered by cfg.Protected — the most specific entry decides, so a root
// inside a protected folder is writable and a protected file inside a root
// is not. Relative paths resolve against the call's cwd. A
// path is checked both as the tool resolves it (lexically, then the
// kernel follows symlinks) and as the kernel would read it unnormalised
// (a symlink before ".." first); both must pass. A missing, empty or
// unreadable path, or one that cannot be resolved, is denied.
func Fence(in Input, cfg FenceConfig) Decision {
	field, ok := fencePathField[in.ToolName]
	if !ok {
		return Decision{Verdict: Pass, Detail: map[string]any{"tool": "not a write tool"}}
	}
	p, err := toolPath(in.ToolInput, field)
	if err == nil {
		p, err = expandHome(p, cfg.home)
	}
	if err == nil && !filepath.IsAbs(p) {
		if in.Cwd == "" || !filepath.IsAbs(in.Cwd) {
			err = fmt.Errorf("%s %q is relative and the call has no absolute cwd", field, p)
		}
		p = in.Cwd + string(filepath.Separator) + p
	}
	var targets []string
	res := &resolver{}
	for _, cand := range []string{filepath.Clean(p), p} {
		if err != nil {
			break
		}
		var r string
		if r, err = res.resolve(cand); err == nil {
			targets = append(targets, r)
		}
	}
	if err != nil {
		return Decision{Verdict: Deny, Reason: fenceUnclearReason(err), Detail: map[string]any{"error": err.Error()}}
	}
	roots, prot := res.all(cfg.Roots), res.protected(cfg.Protected)
	for _, t := range targets {
		// The most specific entry decides: a root inside a protected
		// folder (a step's workbench in the run dir) is writable, a
		// protected file inside a root (the goal) is not.
		root := deepestRoot(t, roots)
		if entry, depth := protectedBy(t, prot); depth >= 0 && depth >= root {
			return Decision{Verdict: Deny, Reason: FenceProtectedReason(p, roots),
				Detail: map[string]any{"path": p, "resolved": t, "protected": entry}}
		}
		if root < 0 {
			return Decision{Verdict: Deny, Reason: FenceOutsideReason(p, t, roots),
				Detail: map[string]any{"path": p, "resolved": t, "outside": true}}
		}
	}
	return Decision{Verdict: Pass, Detail: map[string]any{"path": p, "resolved": targets[0]}}
}

// toolPath reads the string field of tool_input; absent, null, empty or
// not a string is an error.
func toolPath(input json.RawMessage, field string) (string, error) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(input, &fields) != nil || fields == nil {
		return "", errors.New("tool_input is not an object")
	}
	var p string
	raw, ok := fields[field]
	if !ok || string(raw) == "null" {
		return "", fmt.Errorf("tool_input has no %s", field)
	}
	if json.Unmarshal(raw, &p) != nil {
		return "", fmt.Errorf("%s is not a string", field)
	}
	if strings.TrimSpace(p) == "" || strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("%s is empty or not a path", field)
	}
	return p, nil
}

// expandHome expands "~" and "~/…" to the home folder, as the CLI's write
// tools do; other paths are returned as they are. A path through /proc or
// /dev/fd names another process's view of the file system and is refused.
func expandHome(p string, homeDir func() (string, error)) (string, error) {
	if homeDir == nil {
		homeDir = os.UserHomeDir
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := homeDir()
		if err != nil || !filepath.IsAbs(home) {
			return "", fmt.Errorf("%s starts with ~ and there is no home folder", p)
		}
		p = home + p[1:]
	}
	if c := filepath.Clean(p); under(c, "/proc") || under(c, "/dev/fd") {
		return "", fmt.Errorf("%s goes through a process's view of the file system", p)
	}
	return p, nil
}

// The fixed sentences of the fence's deny texts, which the model reads:
// Chinese, like every model-facing text. Each reason ends with the folders
// the session may write to (writableNote), so the reason built without
// them is its prefix.
const (
	fenceProtectedText = " 是 flower 自己的记录(运行历史、需求、目标、问答记录、交接文档和工作台索引只由 flower 来写)," +
		"所以这次写入被拒绝。保持原样:需求或目标有错或已过时,就在回答里说出来。" +
		"工作写在工作区里,自己的笔记作为新文件写到工作台的 notes/,长产出写到它的 artifacts/。"
	fenceOutsideText = " 不在这个会话可以写的目录里,所以这次写入被拒绝。改为写在工作区里(相对路径从你的 cwd 算起)。" +
		"如果工作确实需要那个目录,在回答里说出来:人可以用 flower --allow-dir DIR 放行。"
	fenceResolvesTo  = "(实际指向 %s)"
	fenceUnclearText = "flower-hook fence 判断不了这次写入落在哪里,为安全起见拒绝。请用工作区里的普通路径指明文件。原因: "
)

// FenceProtectedReason is the deny text for a write to flower's own state.
func FenceProtectedReason(path string, roots []string) string {
	return path + fenceProtectedText + writableNote(roots)
}

// FenceOutsideReason is the deny text for a write outside every root.
func FenceOutsideReason(path, resolved string, roots []string) string {
	where := path
	if resolved != filepath.Clean(path) {
		where += fmt.Sprintf(fenceResolvesTo, resolved)
	}
	return where + fenceOutsideText + writableNote(roots)
}

// writableNote names the folders a session may write to ("" for none).
func writableNote(roots []string) string {
	if len(roots) == 0 {
		return ""
	}
	return "可以写的目录: " + strings.Join(roots, ", ") + "。"
}

// fenceUnclearReason is the deny text for a write whose target is unclear.
func fenceUnclearReason(err error) string {
	return fenceUnclearText + err.Error()
}

// resolver resolves paths with one lstat (and readlink) per distinct
// element: the roots, the protected paths and the target of one decision
// share most of their folders.
type resolver struct {
	seen map[string]linkInfo
}

// linkInfo is what lstat and readlink said about one path.
type linkInfo struct {
	err    error
	link   bool
	target string
}

func (r *resolver) lstat(p string) linkInfo {
	if li, ok := r.seen[p]; ok {
		return li
	}
	var li linkInfo
	st, err := os.Lstat(p)
	switch {
	case err != nil:
		li.err = err
	case st.Mode()&fs.ModeSymlink != 0:
		li.link = true
		li.target, li.err = os.Readlink(p)
	}
	if r.seen == nil {
		r.seen = map[string]linkInfo{}
	}
	r.seen[p] = li
	return li
}

// resolve resolves the absolute path p as the kernel opens it for
// writing, element by element from the root (one lstat each): symlinks are
// followed wherever they exist (relative ones from their folder), a
// dangling symlink leads to its target (a write creates it), ".." applies
// after the element before it is resolved, and the part of p that does not
// exist yet is appended to its deepest existing ancestor.
func (r *resolver) resolve(p string) (string, error) {
	sep := string(filepath.Separator)
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%s is not absolute", p)
	}
	rest := strings.Split(p, sep)
	resolved, links, missing := sep, 0, false
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		if missing {
			resolved = next
			continue
		}
		li := r.lstat(next)
		switch {
		case errors.Is(li.err, fs.ErrNotExist) && !li.link:
			resolved, missing = next, true
			continue
		case li.err != nil:
			return "", li.err
		case !li.link:
			resolved = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("%s: too many levels of symbolic links", p)
		}
		target := li.target
		if filepath.IsAbs(target) {
			resolved = sep
		}
		rest = append(strings.Split(target, sep), rest...)
	}
	return resolved, nil
}

// all resolves each absolute root (relative ones against the process's
// cwd); one that cannot be resolved is left out.
func (r *resolver) all(paths []string) []string {
	var out []string
	for _, p := range paths {
		if a, err := filepath.Abs(p); err == nil {
			if res, err := r.resolve(a); err == nil {
				out = append(out, res)
			}
		}
	}
	return out
}

// deepestRoot is the length of the longest of roots that is the resolved
// path t or lies above it (the most specific), -1 for none.
func deepestRoot(t string, roots []string) int {
	depth := -1
	for _, r := range roots {
		if under(t, r) && len(r) > depth {
			depth = len(r)
		}
	}
	return depth
}

// under reports whether t is dir or lies inside it (both clean and absolute).
func under(t, dir string) bool {
	rel, err := filepath.Rel(dir, t)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// protectedPath is one resolved entry of FenceConfig.Protected: a path (a
// file or a folder), or a folder and a name pattern.
type protectedPath struct {
	entry, path, pattern string
}

// protected resolves the protected entries once per decision; one that
// cannot be resolved is left out.
func (r *resolver) protected(entries []string) []protectedPath {
	var out []protectedPath
	for _, e := range entries {
		a, err := filepath.Abs(e)
		if err != nil {
			continue
		}
		pp := protectedPath{entry: e}
		if base := filepath.Base(a); strings.ContainsAny(base, "*?[") {
			a, pp.pattern = filepath.Dir(a), base
		}
		if pp.path, err = r.resolve(a); err == nil {
			out = append(out, pp)
		}
	}
	return out
}

// protectedBy returns the most specific entry of protected that covers the
// resolved path t — the path itself, a folder above it, or a pattern its
// name matches in the pattern's folder — and how specific it is (the
// length of the covering path; a pattern match is t itself); -1 for none.
func protectedBy(t string, protected []protectedPath) (entry string, depth int) {
	depth = -1
	fold := func(s string) string {
		if foldCase {
			return strings.ToLower(s)
		}
		return s
	}
	t = fold(t)
	for _, p := range protected {
		d := -1
		switch {
		case p.pattern != "":
			if ok, _ := filepath.Match(fold(p.pattern), filepath.Base(t)); ok && filepath.Dir(t) == fold(p.path) {
				d = len(t)
			}
		case under(t, fold(p.path)):
			d = len(p.path)
		}
		if d > depth {
			entry, depth = p.entry, d
		}
	}
	return entry, depth
}
