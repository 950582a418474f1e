package harness

import (
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flowerhq/flower/internal/redact"
)

// captureStderr runs fn with os.Stderr redirected and returns what it wrote.
func captureStderr(t *testing.T, fn func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	done := make(chan string)
	go func() { b, _ := io.ReadAll(r); done <- string(b) }()
	fn()
	os.Stderr = old
	w.Close()
	return <-done
}

// A manifest that does not parse is moved aside with one warning, and the
// write still lands: a fresh manifest with the new row. The control: the
// same write over a good manifest keeps the other rows and warns nothing.
func TestManifestDamageRecovered(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		damaged       bool
	}{
		{"truncated", `[{"run":"old","workspace":"/w","results":[{"step":"a","ok":tr`, true},
		{"garbage", "\x00\x00\x00", true},
		{"object not array", `{"run":"old"}`, true},
		{"control: good", `[{"run":"old","workspace":"/w","results":[]}]`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "manifest.json")
			os.WriteFile(path, []byte(tc.content), 0o600)
			var err error
			warn := captureStderr(t, func() {
				err = WriteManifestRow(path, ManifestRow{Run: "new", Results: []StepResult{{Step: "s", OK: true}}})
				if err == nil { // a second write finds a good file: no second warning
					err = WriteManifestRow(path, ManifestRow{Run: "new", Results: []StepResult{{Step: "s", OK: true}, {Step: "t"}}})
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			rows, err := ReadManifest(path)
			if err != nil {
				t.Fatalf("manifest after the write: %v", err)
			}
			aside, _ := filepath.Glob(path + ".corrupt-*")
			if !tc.damaged {
				if len(rows) != 2 || warn != "" || len(aside) != 0 {
					t.Fatalf("good manifest: rows %d, warning %q, moved aside %v", len(rows), warn, aside)
				}
				return
			}
			if len(rows) != 1 || rows[0].Run != "new" || len(rows[0].Results) != 2 {
				t.Fatalf("rows %+v, want the new row only", rows)
			}
			if len(aside) != 1 {
				t.Fatalf("moved aside: %v", aside)
			}
			if b, _ := os.ReadFile(aside[0]); string(b) != tc.content {
				t.Errorf("the damaged file changed on the way aside: %q", b)
			}
			if strings.Count(warn, "\n") != 1 || !strings.Contains(warn, "did not parse") || !strings.Contains(warn, filepath.Base(aside[0])) {
				t.Errorf("warning %q, want one line naming %s", warn, filepath.Base(aside[0]))
			}
		})
	}
}

// Steps a dead flower left running are marked killed mid-step and their
// spool files removed; a live one's (this process) is kept as running,
// with its spool.
func TestRecoverRunDirMarksKilledSteps(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "manifest.json")
	rows := []ManifestRow{
		{Run: "r1", Results: []StepResult{{Step: "done", OK: true}}, Running: []RunningStep{{Step: "cut", PID: dead.Process.Pid, StartedAt: 1}}},
		{Run: "r2", Running: []RunningStep{{Step: "live", PID: os.Getpid(), StartedAt: 2}}},
	}
	data, _ := json.Marshal(rows)
	os.WriteFile(path, data, 0o600)
	leftover := filepath.Join(dir, ".manifest.json.tmp123")
	os.WriteFile(leftover, []byte("[half"), 0o600)
	// The spools of the dead step's attempts go; the live one's stays.
	spools := map[string]bool{filepath.Join(dir, "r1", "cut", ".spool-1"): false, filepath.Join(dir, "r2", "live", ".spool-2"): true}
	for p := range spools {
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, []byte("text"), 0o600)
	}
	n, err := RecoverRunDir(dir)
	for p, keep := range spools {
		if _, err := os.Stat(p); (err == nil) != keep {
			t.Errorf("spool %s: kept %v, want %v", p, err == nil, keep)
		}
	}
	if _, err := os.Stat(leftover); err == nil {
		t.Error("the temp file of a cut-short write is still there")
	}
	if err != nil || n != 1 {
		t.Fatalf("marked %d, err %v; want 1", n, err)
	}
	got, _ := ReadManifest(path)
	r1, r2 := got[0], got[1]
	if len(r1.Running) != 0 || len(r1.Results) != 2 || r1.Results[1].Step != "cut" || r1.Results[1].OK ||
		!strings.HasPrefix(r1.Results[1].Error, KilledMidStep) {
		t.Errorf("killed row: %+v", r1)
	}
	if len(r2.Running) != 1 || len(r2.Results) != 0 {
		t.Errorf("live row changed: %+v", r2)
	}
	if n, _ := RecoverRunDir(dir); n != 0 {
		t.Errorf("a second open marked %d again", n)
	}
}

// A run dir whose rows list nothing running is not listed when it opens:
// the background sweep removes the temp files of cut-short manifest writes,
// at most once a minute (the control: a temp file left after a sweep stays
// until the next one is due).
func TestSweepRunDirRemovesLeftoverTemps(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", t.TempDir())
	leftover := filepath.Join(dir, ".manifest.json.tmp7")
	os.WriteFile(leftover, []byte("[half"), 0o600)
	sweepRunDir(dir)
	if _, err := os.Stat(leftover); err == nil {
		t.Fatal("the sweep left the temp file of a cut-short write")
	}
	os.WriteFile(leftover, []byte("[half"), 0o600)
	sweepRunDir(dir)
	if _, err := os.Stat(leftover); err != nil {
		t.Fatal("a second sweep within the minute ran anyway")
	}
	if st, err := os.Stat(filepath.Join(dir, "manifest.json.lock")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("lock file: %v, %v; want it private", st, err)
	}
}

// Socket folders of dead flowers go; a live socket's folder and a young one
// stay.
func TestRemoveDeadSockets(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	mk := func(name string, live bool, age time.Duration) string {
		d := filepath.Join(tmp, name)
		os.Mkdir(d, 0o700)
		ln, err := net.Listen("unix", filepath.Join(d, "s.sock"))
		if err != nil {
			t.Fatal(err)
		}
		if live {
			t.Cleanup(func() { ln.Close() })
		} else {
			ln.(*net.UnixListener).SetUnlinkOnClose(false)
			ln.Close()
		}
		old := time.Now().Add(-age)
		os.Chtimes(d, old, old)
		return d
	}
	dead := mk("flower-sock-dead", false, time.Hour)
	deadCh := mk("flower-ch-dead", false, time.Hour)
	live := mk("flower-sock-live", true, time.Hour)
	young := mk("flower-sock-young", false, 0)
	other := mk("not-flower-sock", false, time.Hour)
	removeDeadSockets()
	for d, want := range map[string]bool{dead: false, deadCh: false, live: true, young: true, other: true} {
		if _, err := os.Stat(d); (err == nil) != want {
			t.Errorf("%s exists=%v, want %v", filepath.Base(d), err == nil, want)
		}
	}
}

func TestPrivateDirNarrowsNeverWidens(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct{ found, want os.FileMode }{{0, 0o700}, {0o755, 0o700}, {0o750, 0o700}, {0o500, 0o500}} {
		d := filepath.Join(root, tc.found.String())
		if tc.found != 0 {
			os.Mkdir(d, tc.found)
			os.Chmod(d, tc.found)
		}
		if err := privateDir(d); err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat(d); st.Mode().Perm() != tc.want {
			t.Errorf("found %o: got %o, want %o", tc.found, st.Mode().Perm(), tc.want)
		}
	}
}

// startPrivate gives the child a umask without group and other bits and
// leaves the process's own as it was (a program embedding the Runtime keeps
// its umask); the control is the child's umask differing from ours.
func TestStartPrivateScopesTheUmask(t *testing.T) {
	umaskMu.Lock()
	before := syscall.Umask(0o022)
	umaskMu.Unlock()
	defer func() {
		umaskMu.Lock()
		syscall.Umask(before)
		umaskMu.Unlock()
	}()
	cmd := exec.Command("/bin/sh", "-c", "umask")
	var out strings.Builder
	cmd.Stdout = &out
	if err := startPrivate(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(out.String()); got != "0077" {
		t.Errorf("the child's umask is %s, want 0077", got)
	}
	umaskMu.Lock()
	now := syscall.Umask(0o022)
	umaskMu.Unlock()
	if now != 0o022 {
		t.Errorf("the process umask is %03o after the spawn, want 022 as it was", now)
	}
}

// TestRedactFrame: a transcript_mirror frame redacted entry by entry comes
// out exactly as redacting it whole would make it, wherever a secret is (an
// entry, the file path, none) and whatever the frame's shape; a clean
// frame is passed on as it is (no copy).
func TestRedactFrame(t *testing.T) {
	const value = "sk-ant-api03-FRAMESECRETFRAME"
	red := redact.FromEnv([]string{"ANTHROPIC_API_KEY=" + value})
	pad := strings.Repeat("a coherent line with a curl in it ", 10)
	entry := func(s string) string { return `{"type":"user","message":{"content":"` + s + `"}}` }
	frame := func(path string, entries ...string) string {
		return `{"type":"transcript_mirror","filePath":"` + path + `","entries":[` + strings.Join(entries, ",") + `]}`
	}
	for _, tc := range []struct {
		name, line string
		changes    bool
	}{
		{"clean", frame("/p/s.jsonl", entry(pad), entry("hi")), false},
		{"a value in an entry", frame("/p/s.jsonl", entry(pad), entry("key "+value)), true},
		{"a shape in an entry, escaped", frame("/p/s.jsonl", entry(`\u0067hp_`+strings.Repeat("a1B2", 9))), true},
		{"a value in the file path", frame("/p/"+value+".jsonl", entry(pad)), true},
		{"no entries", `{"type":"transcript_mirror","filePath":"` + value + `"}`, true},
		{"entries not an array", `{"type":"transcript_mirror","entries":"` + value + `"}`, true},
		{"not JSON", frame("/p/s.jsonl", entry(pad)) + ` {"k":"` + value + `"`, true},
	} {
		line := []byte(tc.line)
		got, want := redactFrame(red, line), red.Bytes([]byte(tc.line))
		if string(got) != string(want) {
			t.Errorf("%s: redactFrame gave\n%s\nredacting whole gives\n%s", tc.name, got, want)
		}
		// Control: the case holds a secret, or is clean, as it claims.
		if changed := string(want) != tc.line; changed != tc.changes || strings.Contains(string(got), value) {
			t.Errorf("%s: changed %v, want %v; or the value survived: %s", tc.name, changed, tc.changes, got)
		}
		if !tc.changes && &got[0] != &line[0] {
			t.Errorf("%s: a clean frame was copied", tc.name)
		}
	}
}
