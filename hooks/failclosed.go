package hooks

import "errors"
import "fmt"
import "io/fs"
import "os"
import "path/filepath"
import "strings"

import "github.com/flowerhq/flower/internal/atomicfile"

// PluginHookBin is where the plugin's hooks.json expects flower-hook, relative
// to the plugin folder (scripts/setup.sh builds it there; it is git-ignored).
const PluginHookBin = "bin/flower-hook"

// PluginCommand is the plugin's expression for its flower-hook binary.
const PluginCommand = `"${CLAUDE_PLUGIN_ROOT}/` + PluginHookBin + `"`

// DenyCommand is the hook command line for a deny guard (delegate,
// whitelist): bin, a shell expression naming flower-hook (a quoted path, or
// PluginCommand), run with args, wrapped so that the guard fails closed
// even when flower-hook cannot run. Claude Code runs the tool when a hook
// exits with anything but 2, so a missing or non-executable binary (126,
// 127), a crash, a kill or any other exit would let the call through. The
// wrapper passes on only flower-hook's own answer — exit 0 with its JSON
// on stdout — and turns everything else into exit 2 with a reason on
// stderr. flower-hook's own fail-closed exit 2 stays 2.
func DenyCommand(bin string, args ...string) string {
	parts := []string{bin}
	for _, a := range args {
		parts = append(parts, ShellQuote(a))
	}
	guard := "flower-hook"
	if len(args) > 0 {
		guard += " " + args[0]
	}
	return "out=$(" + strings.Join(parts, " ") + "); c=$?; " +
		`if [ "$c" -eq 0 ] && [ -n "$out" ]; then printf '%s\n' "$out"; exit 0; fi; ` +
		`echo "` + guard + ` gave no decision (exit $c: missing, not executable or crashed), so this call is denied to stay safe. ` +
		`Build it with scripts/setup.sh." >&2; exit 2`
}

// ShellQuote quotes s for a POSIX shell (left bare when it is plainly safe).
func ShellQuote(s string) string {
	safe := func(r rune) bool {
		return r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || strings.ContainsRune("/._-,:=+@%", r)
	}
	if s != "" && strings.IndexFunc(s, func(r rune) bool { return !safe(r) }) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// CheckPlugin reports whether the plugin folder dir holds an executable
// flower-hook; the error names scripts/setup.sh, which builds it.
func CheckPlugin(dir string) error {
	p := filepath.Join(dir, PluginHookBin)
	st, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("the guards plugin has no %s (it is built, not committed): run scripts/setup.sh", p)
	case err != nil:
		return fmt.Errorf("the guards plugin's flower-hook: %w (run scripts/setup.sh)", err)
	case !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("%s is not an executable file: run scripts/setup.sh", p)
	}
	return nil
}

// confined checks a path flower writes under the workbench root (the spill
// folder, INDEX.md): it may not be a symlink, and where it exists it must
// resolve inside root. A path that does not exist yet is fine.
func confined(root, p string) error {
	r, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	if rr, err := filepath.EvalSymlinks(r); err == nil {
		r = rr
	}
	if err := atomicfile.NotALink(p); err != nil {
		return err
	}
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	resolved, err := filepath.EvalSymlinks(p)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(r, resolved)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s resolves to %s, outside the workbench %s", p, resolved, r)
	}
	return nil
}
