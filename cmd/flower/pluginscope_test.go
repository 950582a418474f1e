package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestUserScopePlugin(t *testing.T) {
	for _, tc := range []struct {
		name, settings string
		want           bool
	}{
		{"enabled", `{"enabledPlugins":{"flower@flower":true}}`, true},
		{"another marketplace", `{"enabledPlugins":{"flower@mine":true}}`, true},
		{"disabled", `{"enabledPlugins":{"flower@flower":false}}`, false},
		{"other plugin", `{"enabledPlugins":{"lint@tools":true}}`, false},
		{"none", `{}`, false},
		{"damaged", `{"enabledPlugins":`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
			os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(tc.settings), 0o600)
			getenv := func(k string) string {
				if k == "HOME" {
					return home
				}
				return ""
			}
			if got := userScopePlugin(getenv) != ""; got != tc.want {
				t.Errorf("userScopePlugin = %v, want %v", got, tc.want)
			}
		})
	}
	cfg := t.TempDir()
	os.WriteFile(filepath.Join(cfg, "settings.json"), []byte(`{"enabledPlugins":{"flower@flower":true}}`), 0o600)
	if got := userScopePlugin(func(k string) string {
		if k == "CLAUDE_CONFIG_DIR" {
			return cfg
		}
		return ""
	}); got != filepath.Join(cfg, "settings.json") {
		t.Errorf("CLAUDE_CONFIG_DIR: %q", got)
	}
}
