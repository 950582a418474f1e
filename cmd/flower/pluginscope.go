package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// userScopePlugin reports the user-scope settings file that enables
// flower's guards plugin, or "" when none does. A plugin enabled there
// guards every claude session of the user, in every project: each main
// thread is delegate-only. `flower doctor` warns about it, since
// `claude plugin install` picks user scope unless told otherwise.
func userScopePlugin(getenv func(string) string) string {
	dir := getenv("CLAUDE_CONFIG_DIR")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".claude")
	}
	path := filepath.Join(dir, "settings.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var s struct {
		EnabledPlugins map[string]any `json:"enabledPlugins"`
	}
	if json.Unmarshal(b, &s) != nil {
		return ""
	}
	for name, on := range s.EnabledPlugins {
		if enabled, _ := on.(bool); enabled && strings.HasPrefix(name, "flower@") {
			return path
		}
	}
	return ""
}
