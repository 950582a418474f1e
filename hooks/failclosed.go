package hooks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/flowerhq/flower/internal/atomicfile"
)

// PluginHookBin is where the plugin's hooks.json expects flower-hook, relative
// to the plugin folder (scripts/setup.sh builds it there; it is git-ignored).
const PluginHookBin = "bin/flower-hook"

// InstallHint says how to install flower-hook, for one-line refusals.
const InstallHint = "go install github.com/flowerhq/flower/cmd/flower-hook@latest (or scripts/setup.sh in a checkout)"

// pluginLocate is the shell prelude of the plugin's hook commands: it sets
// h to the flower-hook in the plugin's bin/ (a checkout's set-up, or the
// one flower materializes), else the one beside a flower on PATH (a go
// install), else one on PATH, else to nothing.
const pluginLocate = `h="${CLAUDE_PLUGIN_ROOT}/` + PluginHookBin + `"; ` +
	`[ -x "$h" ] || h="$(dirname -- "$(command -v flower || echo /nonexistent/flower)")/flower-hook"; ` +
	`[ -x "$h" ] || h="$(command -v flower-hook)" || h=; `

// pluginDenyCommand is the plugin's hook command for a deny guard: the
// located flower-hook run through DenyCommand, and, when none was found,
// exit 2 with one line saying how to install it.
func pluginDenyCommand(args ...string) string {
	return pluginLocate + `if [ -z "$h" ]; then echo "flower-hook was not found (not in the plugin's bin/, beside flower, nor on PATH), ` +
		`so this call is denied to stay safe: install it with ` + InstallHint + `" >&2; exit 2; fi; ` + DenyCommand(`"$h"`, args...)
}

// pluginCommand is the plugin's hook command for a transforming guard: the
// located flower-hook with tail (shell words, expanded by the shell); with
// none found it does nothing (the original output stands, as when a
// transforming guard fails).
func pluginCommand(tail string) string {
	return pluginLocate + `[ -n "$h" ] || exit 0; exec "$h" ` + tail
}

// DenyCommand is the hook command line for a deny guard (delegate,
// whitelist): bin, a shell expression naming flower-hook (a quoted path, or
// pluginCommand), run with args, wrapped so that the guard fails closed
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
		`Install it: ` + InstallHint + `." >&2; exit 2`
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
