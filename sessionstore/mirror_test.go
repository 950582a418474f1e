package sessionstore_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/sessionstore"
)

func TestKeyFromPath(t *testing.T) {
	for _, tc := range []struct {
		path     string
		want     sessionstore.Key
		wantMeta bool
		wantErr  bool
	}{
		{"/c/projects/pk/s1.jsonl", sessionstore.Key{ProjectKey: "pk", SessionID: "s1"}, false, false},
		{"/c/projects/pk/s1/subagents/agent-a1.jsonl", sessionstore.Key{ProjectKey: "pk", SessionID: "s1", Subpath: "subagents/agent-a1"}, false, false},
		{"/c/projects/pk/s1/subagents/agent-a1.meta.json", sessionstore.Key{ProjectKey: "pk", SessionID: "s1", Subpath: "subagents/agent-a1"}, true, false},
		{"/home/u/projects/work/.claude/projects/-home-u-ws/s2.jsonl", sessionstore.Key{ProjectKey: "-home-u-ws", SessionID: "s2"}, false, false},
		{"/c/projects/pk/s1.meta.json", sessionstore.Key{}, false, true},
		{"/c/elsewhere/pk/s1.jsonl", sessionstore.Key{}, false, true},
		{"/c/projects/pk/s1.txt", sessionstore.Key{}, false, true},
		{"/c/projects/s1.jsonl", sessionstore.Key{}, false, true},
	} {
		t.Run(tc.path, func(t *testing.T) {
			got, meta, err := sessionstore.KeyFromPath(tc.path)
			if (err != nil) != tc.wantErr || got != tc.want || meta != tc.wantMeta {
				t.Fatalf("KeyFromPath = %v, %v, %v; want %v, %v, err %v", got, meta, err, tc.want, tc.wantMeta, tc.wantErr)
			}
		})
	}
}

func TestMirror(t *testing.T) {
	s := openTemp(t)
	main := `{"parentUuid":null,"uuid":"a","type":"user","message":{"role":"user","content":"hi \u00fc"}}`
	frames := []string{
		`{"type":"transcript_mirror","filePath":"/cfg/projects/pk/s1.jsonl","entries":[` + main + `,{"type":"queue-operation","operation":"enqueue"}]}`,
		// The same entry again (a re-sent frame) is deduplicated on uuid.
		`{"type":"transcript_mirror","filePath":"/cfg/projects/pk/s1.jsonl","entries":[` + main + `]}`,
		`{"type":"transcript_mirror","filePath":"/cfg/projects/pk/s1/subagents/agent-x.jsonl","entries":[{"uuid":"b","type":"user","isSidechain":true}]}`,
		`{"type":"transcript_mirror","filePath":"/cfg/projects/pk/s1/subagents/agent-x.meta.json","entries":[{"agentType":"worker","toolUseId":"t0"}]}`,
	}
	for _, f := range frames {
		if err := s.Mirror(t.Context(), []byte(f)); err != nil {
			t.Fatalf("Mirror(%.60s): %v", f, err)
		}
	}
	got, _ := s.Load(t.Context(), sessionstore.Key{ProjectKey: "pk", SessionID: "s1"})
	if len(got) != 2 || string(got[0]) != main {
		t.Fatalf("main = %q, want the entry byte for byte, once, plus the queue-operation", got)
	}
	sub, _ := s.Load(t.Context(), sessionstore.Key{ProjectKey: "pk", SessionID: "s1", Subpath: "subagents/agent-x"})
	if len(sub) != 2 || gjson.GetBytes(sub[1], "type").String() != "agent_metadata" || gjson.GetBytes(sub[1], "agentType").String() != "worker" {
		t.Fatalf("subagent = %q, want its entry and an agent_metadata entry", sub)
	}
	for _, bad := range []string{
		`{"type":"assistant","message":{}}`,
		`{"type":"transcript_mirror","filePath":"/tmp/x.jsonl","entries":[{}]}`,
	} {
		if err := s.Mirror(t.Context(), []byte(bad)); !errors.Is(err, sessionstore.ErrNotMirror) {
			t.Errorf("Mirror(%s) = %v, want ErrNotMirror", bad, err)
		}
	}
}

// TestImportMaterializeRoundTrip: a projects folder with a main transcript,
// a subagent transcript and its .meta.json is imported, then materialized
// into a config dir: the same files come back (the pipeline has nothing to
// change in them), private to the user.
func TestImportMaterializeRoundTrip(t *testing.T) {
	src := filepath.Join(t.TempDir(), "projects")
	mainLines := transcriptLines(prompt("hello"), bashTurn("t1", "echo a", "a"), textTurn("e", "done"))
	subLines := transcriptLines(prompt("sub task"), textTurn("s", "sub done"))
	meta := `{"agentType":"worker","isBuiltIn":false,"toolUseId":"toolu_0"}`
	write := func(rel string, data []byte) {
		p := filepath.Join(src, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	jsonl := func(lines []json.RawMessage) []byte {
		var b bytes.Buffer
		sessionstore.WriteJSONL(&b, lines)
		return b.Bytes()
	}
	write("-home-u-ws/s1.jsonl", jsonl(mainLines))
	write("-home-u-ws/s1/subagents/agent-a1.jsonl", jsonl(subLines))
	write("-home-u-ws/s1/subagents/agent-a1.meta.json", []byte(meta))
	write("other/s2.jsonl", jsonl(transcriptLines(prompt("x"))))

	s := openTemp(t)
	n, err := s.Import(t.Context(), filepath.Dir(src)) // the config dir holding projects/
	if err != nil || n != len(mainLines)+len(subLines)+1+1 {
		t.Fatalf("Import = %d, %v", n, err)
	}
	refs, _ := s.Sessions(t.Context())
	if len(refs) != 2 {
		t.Fatalf("Sessions = %+v, want 2", refs)
	}
	key, err := s.Find(t.Context(), "s1")
	if err != nil || key != (sessionstore.Key{ProjectKey: "-home-u-ws", SessionID: "s1"}) {
		t.Fatalf("Find = %v, %v", key, err)
	}
	cfg := filepath.Join(t.TempDir(), "cfg")
	if _, err := s.MaterializeKey(t.Context(), key, cfg); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string][]byte{
		"-home-u-ws/s1.jsonl":                        jsonl(mainLines),
		"-home-u-ws/s1/subagents/agent-a1.jsonl":     jsonl(subLines),
		"-home-u-ws/s1/subagents/agent-a1.meta.json": []byte(meta),
	} {
		p := filepath.Join(cfg, "projects", rel)
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s = %q (%v), want %q", rel, got, err, want)
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", rel, fi.Mode().Perm())
		}
	}
	var out bytes.Buffer
	if err := s.Export(t.Context(), key, &out); err != nil || !bytes.Equal(out.Bytes(), jsonl(mainLines)) {
		t.Errorf("Export = %q, %v", out.String(), err)
	}
}

func TestCopyCredentials(t *testing.T) {
	home := t.TempDir()
	from := filepath.Join(home, ".claude")
	os.MkdirAll(from, 0o700)
	os.WriteFile(filepath.Join(from, ".credentials.json"),
		[]byte(`{"claudeAiOauth":{"accessToken":"at-1","refreshToken":"rt-SECRET","expiresAt":1}}`), 0o600)
	os.WriteFile(filepath.Join(home, ".claude.json"), []byte(`{"userID":"u1","oauthAccount":{"refreshToken":"rt-2"}}`), 0o600)
	to := filepath.Join(t.TempDir(), "cfg")
	if err := sessionstore.CopyCredentials(from, to); err != nil {
		t.Fatal(err)
	}
	creds, _ := os.ReadFile(filepath.Join(to, ".credentials.json"))
	state, _ := os.ReadFile(filepath.Join(to, ".claude.json"))
	if strings.Contains(string(creds)+string(state), "rt-") {
		t.Fatalf("a refresh token was copied: %s %s", creds, state)
	}
	if gjson.GetBytes(creds, "claudeAiOauth.accessToken").String() != "at-1" || gjson.GetBytes(state, "userID").String() != "u1" {
		t.Fatalf("copied files lost their other fields: %s %s", creds, state)
	}
	if fi, _ := os.Stat(filepath.Join(to, ".credentials.json")); fi.Mode().Perm() != 0o600 {
		t.Errorf("credentials mode %v, want 0600", fi.Mode().Perm())
	}
	// An API-key user has no credential files: nothing to copy, no error.
	if err := sessionstore.CopyCredentials(t.TempDir(), t.TempDir()); err != nil {
		t.Fatalf("CopyCredentials with no files: %v", err)
	}
}

// TestCopyCredentialsOnlyWhenChanged: a copy that is already there (same
// bytes, 0600) is not written again (its inode stays: atomic writes make a
// new one); a changed login, or a copy whose mode was widened, is.
func TestCopyCredentialsOnlyWhenChanged(t *testing.T) {
	from, to := t.TempDir(), t.TempDir()
	src := filepath.Join(from, ".credentials.json")
	dst := filepath.Join(to, ".credentials.json")
	inode := func() uint64 {
		st, err := os.Stat(dst)
		if err != nil {
			t.Fatal(err)
		}
		return st.Sys().(*syscall.Stat_t).Ino
	}
	copyNow := func() {
		if err := sessionstore.CopyCredentials(from, to); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(src, []byte(`{"claudeAiOauth":{"accessToken":"at-1"}}`), 0o600)
	copyNow()
	first := inode()
	copyNow()
	if inode() != first {
		t.Fatal("an unchanged login was written again")
	}
	os.WriteFile(src, []byte(`{"claudeAiOauth":{"accessToken":"at-2"}}`), 0o600)
	copyNow()
	if got, _ := os.ReadFile(dst); !strings.Contains(string(got), "at-2") || inode() == first {
		t.Fatalf("a changed login was not copied: %s", got)
	}
	os.Chmod(dst, 0o644)
	copyNow()
	if st, _ := os.Stat(dst); st.Mode().Perm() != 0o600 {
		t.Fatalf("a widened copy stays %v; want it rewritten 0600", st.Mode().Perm())
	}
}
