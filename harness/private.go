package harness

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/internal/atomicfile"
	"github.com/flowerhq/flower/internal/redact"
)

// Private by default: the run dir and everything flower writes in it are
// 0700/0600, and secrets never reach the disk. flower narrows the modes it
// finds on its own folders and never widens any.

// privateDir makes dir (and missing parents) 0700 and takes group and other
// bits off dir itself when it already existed with them.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if m := st.Mode().Perm(); m&0o077 != 0 {
		return os.Chmod(dir, m&^0o077)
	}
	return nil
}

// umaskMu orders the umask changes of spawns that run at once (the umask
// is the process's: two interleaved changes could leave the narrow one).
var umaskMu sync.Mutex

// startPrivate starts cmd with group and other bits off the umask it
// inherits (never adding any back), so that what claude and its tools
// create — the portable config dir's transcripts, workbench notes, spill
// files — is private too. The umask is the process's own: it is narrowed
// only while cmd forks and then restored, so a program embedding the
// Runtime keeps its own (a file another goroutine creates in that moment
// comes out more private, never less). Everything flower writes itself
// names its private mode.
func startPrivate(cmd *exec.Cmd) error {
	umaskMu.Lock()
	defer umaskMu.Unlock()
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	syscall.Umask(old | 0o077)
	return cmd.Start()
}

// redactedStore keeps secrets out of the session store: every mirrored
// line is redacted before it is stored.
type redactedStore struct {
	SessionStore
	red *redact.Redactor
}

func (s redactedStore) Mirror(ctx context.Context, line []byte) error {
	return s.SessionStore.Mirror(ctx, redactFrame(s.red, line))
}

// redactFrame is red.Bytes(line) for a transcript_mirror frame, found
// entry by entry: each entry of the frame is redacted on its own, then the
// frame without them. A JSON text is redacted string by string, so the
// frame is unchanged exactly when each part is; then it is passed on as
// it is, and a frame in which anything changes is redacted whole, as
// before. Why: the entries are the very lines of claude's transcript file,
// and the Redactor remembers each JSON text it found clean
// (internal/redact), so the session store's own pass over the entries
// (redact.Process, the same credentials) and the transcript file's scrub
// at the step's end (scrubTree) find them clean by a lookup.
func redactFrame(red *redact.Redactor, line []byte) []byte {
	arr := gjson.GetBytes(line, "entries")
	end := arr.Index + len(arr.Raw)
	if !arr.IsArray() || arr.Index <= 0 || end > len(line) || string(line[arr.Index:end]) != arr.Raw || !json.Valid(line) {
		return red.Bytes(line)
	}
	clean := true
	arr.ForEach(func(_, e gjson.Result) bool {
		entry := []byte(e.Raw)
		out := red.Bytes(entry)
		clean = len(out) == len(entry) && string(out) == e.Raw
		return clean
	})
	frame := append(append(append([]byte{}, line[:arr.Index]...), "[]"...), line[end:]...)
	if out := red.Bytes(frame); !clean || string(out) != string(frame) {
		return red.Bytes(line)
	}
	return line
}

func (s redactedStore) Checkpoint(ctx context.Context) error { return checkpoint(ctx, s.SessionStore) }

// scrubTree redacts, in place, every regular file under dir that holds a
// secret: claude's own transcripts and tool-result files in the portable
// config dir, which flower did not write but keeps in the run dir. The
// credentials copy is left alone (claude needs it to log in).
// Only files changed since since are read.
func scrubTree(dir string, since time.Time, red *redact.Redactor) error {
	if dir == "" {
		return nil
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || d.Name() == ".credentials.json" {
			return nil
		}
		if info, err := d.Info(); err != nil || info.ModTime().Before(since) {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil || len(data) == 0 {
			return nil
		}
		if clean := red.Bytes(data); &clean[0] != &data[0] {
			return atomicfile.Write(p, clean, 0o600)
		}
		return nil
	})
}
