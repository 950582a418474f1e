package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
)

// flower's guards hold authority over the settings claude merges (issue
// 31 item 4). claude 2.1.328 ranks the sources managed > --settings (flag)
// > local > project > user (probed: a `disableAllHooks: true` in the
// workspace's settings.json or settings.local.json, or in the user's, is
// overridden by `false` in the flag layer, and an env.ANTHROPIC_BASE_URL of
// the flag layer wins over the project's). So each step's --settings pins
// what the flag layer can (PinnedSettings) and flower refuses, before the
// step, what it cannot pin (CheckAuthority): managed settings that switch
// hooks off, and workspace env entries that would redirect the API where
// flower has no value of its own to pin.

// AuthorityError is a setting that would take flower's guards or its API
// away: the file and the key, and what to do. Its exit code is 2 (a usage
// error: the person has to change the setting, or opt in).
type AuthorityError struct {
	File, Key, Fix string
}

func (e *AuthorityError) Error() string {
	return fmt.Sprintf("%s sets %s: %s", e.File, e.Key, e.Fix)
}

// ExitCode makes flower exit 2 on it.
func (e *AuthorityError) ExitCode() int { return 2 }

// TrustWorkspaceEnv is the environment variable that, together with the
// --trust-workspace-api flag (Options.TrustWorkspaceAPI), lets the
// workspace's settings choose the API server, key, model or proxy.
const TrustWorkspaceEnv = "FLOWER_TRUST_WORKSPACE_API"

// managedSettingsDir is where claude reads managed settings on this
// platform (managed-settings.json and managed-settings.d/*.json); a
// variable so tests of the pure checks can point it elsewhere.
var managedSettingsDir = managedDir()

func managedDir() string {
	switch runtime.GOOS {
	case "darwin":
		return "/Library/Application Support/ClaudeCode"
	case "windows":
		return `C:\Program Files\ClaudeCode`
	}
	return "/etc/claude-code"
}

// hookKillers are the settings keys that stop flower's hooks; the flag
// layer pins them off, and in managed settings (which outrank it) they
// refuse the step.
var hookKillers = []string{"disableAllHooks", "allowManagedHooksOnly"}

// apiEnvKeys are the env entries that choose where the conversation goes,
// who pays for it or which model answers it.
var apiEnvKeys = []string{
	"ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_CUSTOM_HEADERS",
	"ANTHROPIC_MODEL", "ANTHROPIC_SMALL_FAST_MODEL", "ANTHROPIC_DEFAULT_OPUS_MODEL",
	"ANTHROPIC_DEFAULT_SONNET_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL", "CLAUDE_CODE_SUBAGENT_MODEL",
	"ANTHROPIC_BEDROCK_BASE_URL", "ANTHROPIC_VERTEX_BASE_URL", "CLAUDE_CODE_USE_BEDROCK",
	"CLAUDE_CODE_USE_VERTEX", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
	"http_proxy", "https_proxy", "all_proxy", "no_proxy",
}

// secretEnvKeys are never pinned (their value would land in the step's
// settings file): a workspace that sets one is refused without the opt-in.
var secretEnvKeys = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_CUSTOM_HEADERS"}

// apiTopKeys are top-level settings keys with the same reach as apiEnvKeys.
var apiTopKeys = []string{"apiKeyHelper", "model"}

// workspaceSettingsFiles are the workspace's settings files claude reads
// (project and local), in the order CheckAuthority reports them.
func workspaceSettingsFiles(workspace string) []string {
	return []string{
		filepath.Join(workspace, ".claude", "settings.json"),
		filepath.Join(workspace, ".claude", "settings.local.json"),
	}
}

// readSettings parses one settings file; a missing file is nil. A file
// that does not parse is nil too: claude ignores it as well.
func readSettings(path string) map[string]any {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	return m
}

// managedFiles lists the managed settings files under dir.
func managedFiles(dir string) []string {
	files := []string{filepath.Join(dir, "managed-settings.json")}
	drop, _ := filepath.Glob(filepath.Join(dir, "managed-settings.d", "*.json"))
	sort.Strings(drop)
	return append(files, drop...)
}

// checkManaged refuses managed settings that switch flower's hooks off
// (the flag layer cannot outrank them).
func checkManaged(dir string) error {
	for _, f := range managedFiles(dir) {
		m := readSettings(f)
		for _, k := range hookKillers {
			if v, _ := m[k].(bool); v {
				return &AuthorityError{File: f, Key: k, Fix: "managed settings outrank flower's, so its guards would not run; " +
					"ask whoever manages this machine to unset it, or run claude without flower"}
			}
		}
	}
	return nil
}

// apiPins are the env values the flag layer pins because a workspace
// settings file sets them: each a key flower's own environment (getenv)
// has a value for. A key the workspace sets that flower cannot pin (a
// secret, or no value of its own) is an AuthorityError unless trusted.
func apiPins(workspace string, getenv func(string) string, trusted bool) (map[string]string, error) {
	pins := map[string]string{}
	if trusted {
		return pins, nil
	}
	for _, f := range workspaceSettingsFiles(workspace) {
		m := readSettings(f)
		for _, k := range apiTopKeys {
			if _, ok := m[k]; ok {
				return nil, refuseAPI(f, k)
			}
		}
		env, _ := m["env"].(map[string]any)
		keys := make([]string, 0, len(env))
		for k := range env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !slices.Contains(apiEnvKeys, k) {
				continue
			}
			own := getenv(k)
			if own == "" || slices.Contains(secretEnvKeys, k) {
				return nil, refuseAPI(f, "env."+k)
			}
			pins[k] = own
		}
	}
	return pins, nil
}

func refuseAPI(file, key string) error {
	return &AuthorityError{File: file, Key: key, Fix: "a workspace may not choose the API server, key, model or proxy flower's steps use; " +
		"remove it, or let it by passing --trust-workspace-api with " + TrustWorkspaceEnv + "=1"}
}

// CheckAuthority is everything flower checks before a step: managed
// settings, then the workspace's API settings. It returns the env pins.
func CheckAuthority(workspace string, getenv func(string) string, trusted bool) (map[string]string, error) {
	if err := checkManaged(managedSettingsDir); err != nil {
		return nil, err
	}
	return apiPins(workspace, getenv, trusted)
}

// PinnedSettings are the keys each step's --settings layer pins: hooks on,
// and the API env pins.
func PinnedSettings(pins map[string]string) map[string]any {
	s := map[string]any{}
	for _, k := range hookKillers {
		s[k] = false
	}
	if len(pins) > 0 {
		env := map[string]any{}
		for k, v := range pins {
			env[k] = v
		}
		s["env"] = env
	}
	return s
}

// isAuthorityError reports whether err is (or wraps) an AuthorityError.
func isAuthorityError(err error) bool {
	var ae *AuthorityError
	return errors.As(err, &ae)
}
