package sessionstore

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/flowerhq/flower/internal/atomicfile"
)

// spillPack is the spill file of one load: every trimmed result of the
// transcript, one after another, each under a header line. One file per
// load, not one per result: creating thousands of small files costs more
// than the whole rest of a resume. Its name is a hash of the ids it holds,
// and a stored result never changes, so the same name always means the same
// content: an existing file is reused, never rewritten.
type spillPack struct {
	dir, file string
	reuse     bool // the file exists (or this is a dry run): count lines, write nothing
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
	return sp.write(id, func(w *bufio.Writer) (int, bool) {
		if w != nil {
			w.WriteString(text)
		}
		return strings.Count(text, "\n"), strings.HasSuffix(text, "\n")
	})
}

// addJSON is add for text given as a JSON string literal, decoded straight
// into the file (the text is never held in memory).
func (sp *spillPack) addJSON(id, raw string) (string, int, int, error) {
	return sp.write(id, func(w *bufio.Writer) (int, bool) { return unescapeTo(w, raw) })
}

// write adds a header line, the text body(w) writes (w nil: only count),
// a final newline if the text lacks one, and a blank line.
func (sp *spillPack) write(id string, body func(w *bufio.Writer) (newlines int, endsNL bool)) (string, int, int, error) {
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
	var w *bufio.Writer
	if !sp.reuse {
		w = sp.w
		w.WriteString("==> tool result " + id + " <==\n")
	}
	n, endsNL := body(w)
	if !endsNL {
		n++
		if w != nil {
			w.WriteByte('\n')
		}
	}
	from := sp.lines + 2
	sp.lines += 1 + n + 1 // header, text, blank separator
	if w != nil {
		if err := w.WriteByte('\n'); err != nil {
			sp.err = fmt.Errorf("spill %s: %w", sp.file, err)
			return "", 0, 0, sp.err
		}
	}
	return sp.file, from, from + n - 1, nil
}

// unescapeTo decodes the JSON string literal raw into w (nil: count only)
// and reports its newlines and whether it ends with one.
func unescapeTo(w *bufio.Writer, raw string) (newlines int, endsNL bool) {
	s := raw[1 : len(raw)-1]
	var buf [8]byte
	for len(s) > 0 {
		i := strings.IndexByte(s, '\\')
		if i < 0 {
			if w != nil {
				w.WriteString(s)
			}
			return newlines, false
		}
		if w != nil {
			w.WriteString(s[:i])
		}
		if i+1 >= len(s) {
			return newlines, false
		}
		c := s[i+1]
		s = s[i+2:]
		var out []byte
		switch c {
		case 'n':
			out, newlines = buf[:1], newlines+1
			buf[0] = '\n'
			if len(s) == 0 {
				if w != nil {
					w.Write(out)
				}
				return newlines, true
			}
		case 't':
			out, buf[0] = buf[:1], '\t'
		case 'r':
			out, buf[0] = buf[:1], '\r'
		case 'b':
			out, buf[0] = buf[:1], '\b'
		case 'f':
			out, buf[0] = buf[:1], '\f'
		case 'u':
			r := rune(hex4(s))
			s = s[min(4, len(s)):]
			if utf16.IsSurrogate(r) && len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
				r = utf16.DecodeRune(r, rune(hex4(s[2:])))
				s = s[6:]
			}
			out = utf8.AppendRune(buf[:0], r)
		default: // " \\ /
			out, buf[0] = buf[:1], c
		}
		if w != nil {
			w.Write(out)
		}
	}
	return newlines, false
}

func hex4(s string) int {
	if len(s) < 4 {
		return utf8.RuneError
	}
	n, err := strconv.ParseUint(s[:4], 16, 32)
	if err != nil {
		return utf8.RuneError
	}
	return int(n)
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
	err = errors.Join(sp.err, sp.w.Flush())
	if err == nil && keep {
		err = atomicfile.Commit(sp.tmp, sp.file)
	} else {
		sp.tmp.Close()
		os.Remove(name)
	}
	if err != nil {
		return false, fmt.Errorf("spill %s: %w", sp.file, err)
	}
	return keep, nil
}
