package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/hooks"
	"github.com/flowerhq/flower/plugin"
)

// pluginDir finds the guards plugin: $FLOWER_PLUGIN_DIR (whose flower-hook
// must be there, hooks.CheckPlugin), else the plugin embedded in flower,
// materialized for the flower-hook at hook ("": the one beside flower, or
// on PATH, harness.FindHook).
func pluginDir(getenv func(string) string, hook string) (string, error) {
	if d := getenv("FLOWER_PLUGIN_DIR"); d != "" {
		return d, hooks.CheckPlugin(d)
	}
	bin, err := harness.FindHook(hook)
	if err != nil {
		return "", fmt.Errorf("the guards plugin needs flower-hook: %w (install it: %s)", err, hooks.InstallHint)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("the guards plugin: no cache folder: %w (set XDG_CACHE_HOME, or FLOWER_PLUGIN_DIR)", err)
	}
	return materializePlugin(filepath.Join(base, "flower"), bin)
}

// materializePlugin writes the embedded plugin into cache/plugin-<hash>,
// with bin/flower-hook a symlink to hook; the hash covers the files and
// hook, so a folder is never rewritten in place: one that holds exactly
// this plugin is reused, anything else there is replaced. The folders are
// 0700, the files 0600.
func materializePlugin(cache, hook string) (string, error) {
	files, err := embeddedPlugin()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, name := range plugin.Names {
		fmt.Fprintf(h, "%s\x00%d\x00%s", name, len(files[name]), files[name])
	}
	fmt.Fprintf(h, "bin\x00%s", hook)
	dir := filepath.Join(cache, "plugin-"+hex.EncodeToString(h.Sum(nil))[:16])
	if pluginIntact(dir, files, hook) {
		return dir, nil
	}
	if err := os.MkdirAll(cache, 0o700); err != nil {
		return "", fmt.Errorf("the guards plugin: %w", err)
	}
	tmp, err := os.MkdirTemp(cache, ".plugin-*")
	if err != nil {
		return "", fmt.Errorf("the guards plugin: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := writePlugin(tmp, files, hook); err != nil {
		return "", fmt.Errorf("the guards plugin: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if pluginIntact(dir, files, hook) { // another flower was quicker
			return dir, nil
		}
		if err := os.RemoveAll(dir); err != nil {
			return "", fmt.Errorf("the guards plugin: %w", err)
		}
		if err := os.Rename(tmp, dir); err != nil {
			return "", fmt.Errorf("the guards plugin: %w", err)
		}
	}
	return dir, nil
}

// embeddedPlugin is the embedded plugin's files by name.
func embeddedPlugin() (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, name := range plugin.Names {
		data, err := plugin.Files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		files[name] = data
	}
	return files, nil
}

func writePlugin(dir string, files map[string][]byte, hook string) error {
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			return err
		}
	}
	p := filepath.Join(dir, hooks.PluginHookBin)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return os.Symlink(hook, p)
}

// pluginIntact reports whether dir is a private folder (not a symlink)
// holding exactly files and a bin/flower-hook that links to hook.
func pluginIntact(dir string, files map[string][]byte, hook string) bool {
	st, err := os.Lstat(dir)
	if err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
		return false
	}
	n := 0
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.IsDir():
			return nil
		case rel == filepath.FromSlash(hooks.PluginHookBin):
			if target, err := os.Readlink(p); err != nil || target != hook {
				return errors.New("bin")
			}
		default:
			want, ok := files[filepath.ToSlash(rel)]
			info, ierr := d.Info()
			if !ok || ierr != nil || !info.Mode().IsRegular() || info.Mode().Perm() != 0o600 {
				return errors.New("file")
			}
			if got, err := os.ReadFile(p); err != nil || string(got) != string(want) {
				return errors.New("content")
			}
		}
		n++
		return nil
	})
	return err == nil && n == len(files)+1
}
