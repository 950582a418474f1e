package sessionstore

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// spillPack is the spill file of one load: every trimmed result of the
// transcript, one after another, each under a header line. One file per
// load, not one per result: creating thousands of small files costs more
// than the whole rest of a resume. Its name is a hash of the ids it holds,
// and a stored result never changes, so the same name always means the same
// content: an existing file is reused, never rewritten.
type spillPack struct {
	dir, file string
	reuse     bool
	tmp       *os.File
	w         *bufio.Writer
	lines     int // lines in the file so far
	err       error
}

func newSpillPack(dir string, ids []string) *spillPack {
	h := sha256.New()
	for _, id := range ids {
		h.Write([]byte(id))
		h.Write([]byte{'\n'})
	}
	name := "resume-" + hex.EncodeToString(h.Sum(nil)[:8]) + ".txt"
	return &spillPack{dir: dir, file: filepath.Join(dir, name)}
}

// add appends one result's text; it returns the file and the first and last
// line holding the text (1-based, as the Read tool counts).
func (sp *spillPack) add(id, text string) (string, int, int, error) {
	if sp.err != nil {
		return "", 0, 0, sp.err
	}
	if sp.tmp == nil && !sp.reuse {
		if _, err := os.Stat(sp.file); err == nil {
			sp.reuse = true
		} else if sp.err = sp.open(); sp.err != nil {
			return "", 0, 0, sp.err
		}
	}
	header := "==> tool result " + id + " <==\n"
	body := text
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	n := strings.Count(body, "\n")
	from := sp.lines + 2
	sp.lines += 1 + n + 1 // header, text, blank separator
	if !sp.reuse {
		sp.w.WriteString(header)
		sp.w.WriteString(body)
		if _, err := sp.w.WriteString("\n"); err != nil {
			sp.err = fmt.Errorf("spill %s: %w", sp.file, err)
			return "", 0, 0, sp.err
		}
	}
	return sp.file, from, from + n - 1, nil
}

func (sp *spillPack) open() error {
	if err := ensureDir(sp.dir); err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	f, err := os.CreateTemp(sp.dir, ".resume-*.tmp")
	if err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	sp.tmp, sp.w = f, bufio.NewWriterSize(f, 1<<20)
	return nil
}

// finish moves the written file into place (keep) or discards it; created
// reports a new file.
func (sp *spillPack) finish(keep bool) (created bool, err error) {
	if sp.tmp == nil {
		return false, sp.err
	}
	name := sp.tmp.Name()
	err = errors.Join(sp.err, sp.w.Flush(), sp.tmp.Close())
	if err == nil && keep {
		err = os.Rename(name, sp.file)
	}
	if err != nil || !keep {
		os.Remove(name)
		if err != nil {
			return false, fmt.Errorf("spill %s: %w", sp.file, err)
		}
		return false, nil
	}
	return true, nil
}
