package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/flowerhq/flower/hooks"
	"github.com/flowerhq/flower/plugin"
)

// materializePlugin writes the embedded plugin once per (plugin, hook):
// the same call reuses the folder, another hook gets another folder, and a
// folder someone changed (a file's content, its mode, the link) is put
// back; everything is private.
func TestMaterializePlugin(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "flower")
	dir, err := materializePlugin(cache, "/opt/a/flower-hook")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range plugin.Names {
		want, _ := plugin.Files.ReadFile(name)
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != string(want) {
			t.Errorf("%s: %v, content differs from the embedded file", name, err)
		}
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("folder mode %v (%v), want 0700", st.Mode(), err)
	}
	if again, err := materializePlugin(cache, "/opt/a/flower-hook"); err != nil || again != dir {
		t.Errorf("second call: %s, %v; want the same folder %s", again, err, dir)
	}
	if other, err := materializePlugin(cache, "/opt/b/flower-hook"); err != nil || other == dir {
		t.Errorf("another hook: %s, %v; want another folder", other, err)
	}
	files, err := embeddedPlugin()
	if err != nil {
		t.Fatal(err)
	}
	if !pluginIntact(dir, files, "/opt/a/flower-hook") {
		t.Fatal("control: the folder just written is not intact")
	}
	hooksJSON := filepath.Join(dir, "hooks", "hooks.json")
	link := filepath.Join(dir, hooks.PluginHookBin)
	for _, tamper := range []struct {
		name string
		do   func() error
	}{
		{"content", func() error { return os.WriteFile(hooksJSON, []byte(`{"hooks":{}}`), 0o600) }},
		{"mode", func() error { return os.Chmod(hooksJSON, 0o666) }},
		{"link", func() error {
			os.Remove(link)
			return os.Symlink("/tmp/evil", link)
		}},
	} {
		if err := tamper.do(); err != nil {
			t.Fatal(err)
		}
		if pluginIntact(dir, files, "/opt/a/flower-hook") {
			t.Errorf("%s: a changed folder counts as intact", tamper.name)
		}
		if again, err := materializePlugin(cache, "/opt/a/flower-hook"); err != nil || again != dir {
			t.Fatalf("%s: %s, %v", tamper.name, again, err)
		}
		want, _ := plugin.Files.ReadFile("hooks/hooks.json")
		got, _ := os.ReadFile(hooksJSON)
		st, _ := os.Stat(hooksJSON)
		target, _ := os.Readlink(link)
		if string(got) != string(want) || st.Mode().Perm() != 0o600 || target != "/opt/a/flower-hook" {
			t.Errorf("%s: not put back (mode %v, link %s)", tamper.name, st.Mode(), target)
		}
	}
}
