package harness_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/sessionstore"
	"github.com/flowerhq/flower/testkit/testbed"
)

// TestRun_BigTextStoredOnce: a 200 KiB result text from the real CLI is
// returned whole, written once to the run dir (its own file under texts/,
// which the manifest row points at with text_file and text_bytes, keeping
// only its start), and no other file of the run dir holds its end (events
// keep it cut, and the row of every later write points at the one file),
// besides claude's own transcript and the session store.
// A 3 MiB text with escapes (its stream lines are over 1 MiB: scanned as
// they arrive, the text spooled and read back) is returned whole too, the
// session store holds it whole, and no spool file is left.
// Control: a short text stays in the row itself, with no file.
func TestRun_BigTextStoredOnce(t *testing.T) {
	t.Parallel()
	sizes := map[string]int{"200 KiB": 200 << 10, "3 MiB, streamed": 3 << 20, "control: short": 1 << 10}
	for name, size := range sizes {
		big := size > 64<<10
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			const tail = "END_OF_THE_BIG_TEXT"
			text := strings.Repeat("x", size) + tail
			if size > 1<<20 {
				text = bigModelText(size) + tail
			}
			b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main",
				Replies: []scripted.Reply{{Text: text}}}}})
			rt := newRuntime(t, b, nil)
			res, err := rt.Run(runCtx(t), harness.NewAgentSpec("plain", "x"), "answer", harness.RunOptions{StepName: "big"})
			if err != nil || !res.OK || res.Text != text {
				t.Fatalf("result: ok=%v %d bytes, %v %s", res.OK, len(res.Text), err, res.Error)
			}
			rows, err := harness.ReadManifest(rt.ManifestPath())
			if err != nil || len(rows) != 1 || len(rows[0].Results) != 1 {
				t.Fatalf("manifest: %v %+v", err, rows)
			}
			got := rows[0].Results[0]
			if whole, err := harness.ResultText(rt.RunDir(), got); err != nil || whole != text {
				t.Fatalf("ResultText: %d bytes, %v", len(whole), err)
			}
			holders := filesHolding(t, rt.RunDir(), tail)
			if !big {
				if got.TextFile != "" || got.Text != text || !slices.Contains(holders, "manifest.json") {
					t.Fatalf("control: text_file %q, row text %d bytes, held by %v", got.TextFile, len(got.Text), holders)
				}
				return
			}
			if got.TextBytes != len(text) || !strings.HasPrefix(got.TextFile, "texts"+string(filepath.Separator)) || len(got.Text) > 65<<10 {
				t.Fatalf("row: text_file %q text_bytes %d, row text %d bytes", got.TextFile, got.TextBytes, len(got.Text))
			}
			if len(holders) != 1 || holders[0] != got.TextFile {
				t.Fatalf("the text's end is in %v, want only %s", holders, got.TextFile)
			}
			if st, err := os.Stat(filepath.Join(rt.RunDir(), got.TextFile)); err != nil || st.Mode().Perm() != 0o600 {
				t.Fatalf("text file: %v %v", st, err)
			}
			if spools, _ := filepath.Glob(filepath.Join(rt.RunDir(), "*", "*", ".spool-*")); len(spools) > 0 {
				t.Fatalf("spool files left: %v", spools)
			}
			rt.Close()
			st, err := sessionstore.Open(filepath.Join(rt.RunDir(), "sessions.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			entries, err := st.Load(runCtx(t), sessionstore.Key{ProjectKey: harness.ProjectKey(b.Workspace), SessionID: res.SessionID})
			whole := false
			for _, e := range entries {
				var m struct {
					Message struct {
						Content []struct{ Text string }
					}
				}
				if json.Unmarshal(e, &m) == nil && len(m.Message.Content) > 0 && m.Message.Content[0].Text == text {
					whole = true
				}
			}
			if err != nil || !whole {
				t.Fatalf("the store's session (%d entries, %v) does not hold the whole text", len(entries), err)
			}
		})
	}
}

// filesHolding lists the files under dir (relative) that contain s, but
// for claude's own transcripts (claude-config) and the session store.
func filesHolding(t *testing.T, dir, s string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() && d.Name() == "claude-config" {
			return filepath.SkipDir
		}
		if err != nil || !d.Type().IsRegular() || strings.HasPrefix(d.Name(), "sessions.db") {
			return nil
		}
		if data, err := os.ReadFile(p); err == nil && bytes.Contains(data, []byte(s)) {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}
