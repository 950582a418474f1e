package harness

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/joho/godotenv"

	"github.com/flowerhq/flower/internal/envlist"
	"github.com/flowerhq/flower/internal/login"
	"github.com/flowerhq/flower/internal/pinned"
)

// ErrClaudeNotFound is returned when no claude binary can be located.
var ErrClaudeNotFound = errors.New("claude not found")

// ErrNoCredentials is returned by CheckCredentials.
var ErrNoCredentials = errors.New("no credentials")

// exeRepo is the repository root of the running executable (bin/..).
func exeRepo() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return filepath.Dir(filepath.Dir(exe))
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// FindClaude locates the CLI: explicit (--claude), then
// FLOWER_CLAUDE, then <repo>/.claude-cli/… relative to the executable, then
// PATH.
func FindClaude(explicit string, getenv func(string) string) (string, error) {
	for _, p := range []string{explicit, getenv("FLOWER_CLAUDE")} {
		if p == "" {
			continue
		}
		if lp, err := exec.LookPath(p); err == nil {
			return lp, nil
		}
		return "", fmt.Errorf("harness: %w at %s (from --claude/FLOWER_CLAUDE)", ErrClaudeNotFound, p)
	}
	if r := exeRepo(); r != "" && isExec(filepath.Join(r, pinned.ClaudeRelPath)) {
		return filepath.Join(r, pinned.ClaudeRelPath), nil
	}
	if p, err := exec.LookPath("claude"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("harness: %w: %s", ErrClaudeNotFound, claudeInstallLine())
}

// claudeInstallLine says how to get claude the way this flower was
// installed: from a checkout, its set-up script; otherwise (go install, a
// copied binary) npm.
func claudeInstallLine() string {
	if r := exeRepo(); r != "" && isExec(filepath.Join(r, "scripts", "setup.sh")) {
		return fmt.Sprintf("run %s (installs the pinned %s into %s), pass --claude PATH or set FLOWER_CLAUDE",
			filepath.Join(r, "scripts", "setup.sh"), pinned.ClaudeVersion, pinned.ClaudeRelPath)
	}
	return fmt.Sprintf("install it with `npm install -g @anthropic-ai/claude-code@%s`, pass --claude PATH or set FLOWER_CLAUDE", pinned.ClaudeVersion)
}

// FindHook locates flower-hook: explicit, then next to the running
// executable, then <repo>/bin/flower-hook, then PATH.
func FindHook(explicit string) (string, error) {
	if explicit != "" {
		if lp, err := exec.LookPath(explicit); err == nil {
			return filepath.Abs(lp)
		}
		return "", fmt.Errorf("harness: flower-hook not found at %s", explicit)
	}
	if exe, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(exe), "flower-hook"); isExec(p) {
			return p, nil
		}
	}
	if r := exeRepo(); r != "" && isExec(filepath.Join(r, "bin", "flower-hook")) {
		return filepath.Join(r, "bin", "flower-hook"), nil
	}
	if p, err := exec.LookPath("flower-hook"); err == nil {
		return filepath.Abs(p)
	}
	return "", errors.New("harness: flower-hook not found: build it (go build -o bin/flower-hook ./cmd/flower-hook) or put it on PATH")
}

// CheckCredentials fails unless claude will find some credentials: an API
// key, an auth token, an OAuth token, the Bedrock/Vertex/Foundry switches,
// or the login of the config dir (CLAUDE_CONFIG_DIR or ~/.claude: its
// .credentials.json, on macOS the Keychain entry claude writes instead;
// internal/login). The error says what to set.
func CheckCredentials(getenv func(string) string) error {
	if envCredentials(getenv) {
		return nil
	}
	dir := UserConfigDir(getenv)
	if login.Find(login.Sources(dir, getenv)) != nil {
		return nil
	}
	return fmt.Errorf("harness: %w: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN, "+
		"CLAUDE_CODE_USE_BEDROCK=1, CLAUDE_CODE_USE_VERTEX=1) in the environment or in .env, or log in with `claude /login` "+
		"(no credentials in %s)", ErrNoCredentials, where(login.Sources(dir, getenv)))
}

// envCredentials reports whether the environment alone authenticates: a
// key or token, or a cloud provider switched on.
func envCredentials(getenv func(string) string) bool {
	for _, k := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"} {
		if strings.TrimSpace(getenv(k)) != "" {
			return true
		}
	}
	for _, k := range []string{"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY"} {
		if v := getenv(k); v != "" && v != "0" && !strings.EqualFold(v, "false") {
			return true
		}
	}
	return false
}

// UserConfigDir is the user's claude config dir: CLAUDE_CONFIG_DIR or
// $HOME/.claude.
func UserConfigDir(getenv func(string) string) string {
	if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	return filepath.Join(getenv("HOME"), ".claude")
}

// where names sources for a message: "A or B".
func where(sources []login.Source) string {
	names := make([]string, len(sources))
	for i, s := range sources {
		names[i] = s.Where()
	}
	return strings.Join(names, " or ")
}

// loadDotEnv adds the variables of path that env does not set yet.
func loadDotEnv(env []string, path string) []string {
	vals, err := godotenv.Read(path)
	if err != nil {
		return env
	}
	get := envlist.Getter(env)
	for k, v := range vals {
		if get(k) == "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}
