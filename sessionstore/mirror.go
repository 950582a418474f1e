package sessionstore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
)

// maxLine caps one JSONL line or stream-json frame, as the Runtime does.
const maxLine = 64 << 20

// agentMetadataType is the entry type a subagent's .meta.json travels as
// (the SDK's convention); Materialize writes the last one back as the file.
const agentMetadataType = "agent_metadata"

// Mirror ingests one stream-json line of type "transcript_mirror"
// ({"type":"transcript_mirror","filePath":…,"entries":[…]}): its entries are
// appended to the key named by filePath, which must lie under a projects
// folder (…/projects/<projectKey>/<session>.jsonl, or
// …/projects/<projectKey>/<session>/subagents/agent-<id>.jsonl). Entries go
// in byte for byte as the frame carries them, which is what the CLI wrote
// to its own file.
//
// The frame is read in place and its entries are pieces of line, not
// copies (a frame may carry a model text of many megabytes): line must not
// change while Mirror runs.
func (s *Store) Mirror(ctx context.Context, line []byte) error {
	if typ := gjson.GetBytes(line, "type").String(); typ != "transcript_mirror" {
		return fmt.Errorf("sessionstore: mirror: %w (type %q)", ErrNotMirror, typ)
	}
	if _, _, err := KeyFromPath(gjson.GetBytes(line, "filePath").String()); err != nil {
		return fmt.Errorf("sessionstore: mirror: %w", err)
	}
	return s.deliver(ctx, outWrite{Kind: "mirror", Frame: line})
}

// mirrorNow is Mirror's write.
func (s *Store) mirrorNow(ctx context.Context, line []byte) error {
	frame := gjson.Parse(view(line))
	if frame.Get("type").String() != "transcript_mirror" {
		return fmt.Errorf("sessionstore: mirror: %w (type %q)", ErrNotMirror, frame.Get("type").String())
	}
	file := frame.Get("filePath").String()
	key, meta, err := KeyFromPath(file)
	if err != nil {
		return fmt.Errorf("sessionstore: mirror: %w", err)
	}
	var entries []json.RawMessage
	frame.Get("entries").ForEach(func(_, e gjson.Result) bool {
		raw := piece(line, e.Raw)
		if meta {
			raw = agentMetadata(raw)
		}
		entries = append(entries, raw)
		return true
	})
	if err := s.append(ctx, key, entries); err != nil {
		return fmt.Errorf("sessionstore: mirror %s: %w", file, err)
	}
	return nil
}

// piece is raw, read in place from line, as a slice of line (a copy when
// it is not a piece of it).
func piece(line []byte, raw string) []byte {
	at := int(uintptr(unsafe.Pointer(unsafe.StringData(raw))) - uintptr(unsafe.Pointer(unsafe.SliceData(line))))
	if len(raw) == 0 || at < 0 || at+len(raw) > len(line) {
		return []byte(raw)
	}
	return line[at : at+len(raw) : at+len(raw)]
}

// KeyFromPath derives the store key from a transcript file path under a
// projects folder: <root>/projects/<projectKey>/<session>.jsonl for a main
// transcript, <root>/projects/<projectKey>/<session>/<subpath>.jsonl for one
// beneath it (subagents/agent-<id>). meta reports an agent's .meta.json
// (<…>/agent-<id>.meta.json), which is keyed like its transcript.
func KeyFromPath(file string) (key Key, meta bool, err error) {
	parts := strings.Split(filepath.ToSlash(filepath.Clean(file)), "/")
	name := parts[len(parts)-1]
	switch {
	case strings.HasSuffix(name, ".meta.json"):
		meta, parts[len(parts)-1] = true, strings.TrimSuffix(name, ".meta.json")
	case strings.HasSuffix(name, ".jsonl"):
		parts[len(parts)-1] = strings.TrimSuffix(name, ".jsonl")
	default:
		return Key{}, false, fmt.Errorf("%w: %s is not a .jsonl transcript", ErrNotMirror, file)
	}
	// The rightmost "projects" with at least <projectKey>/<session> after it.
	for i := len(parts) - 3; i >= 0; i-- {
		if parts[i] != "projects" {
			continue
		}
		key = Key{ProjectKey: parts[i+1], SessionID: parts[i+2], Subpath: strings.Join(parts[i+3:], "/")}
		if meta && key.Subpath == "" {
			break
		}
		if err := key.validate(); err != nil {
			return Key{}, false, err
		}
		return key, meta, nil
	}
	return Key{}, false, fmt.Errorf("%w: %s is not under a projects folder", ErrNotMirror, file)
}

// agentMetadata turns the JSON object of a .meta.json into an entry of type
// agent_metadata (unchanged if it already is one).
func agentMetadata(raw []byte) []byte {
	if gjson.GetBytes(raw, "type").String() == agentMetadataType {
		return raw
	}
	body := bytes.TrimSpace(raw)
	if len(body) < 2 || body[0] != '{' {
		return raw
	}
	inner := bytes.TrimSpace(body[1 : len(body)-1])
	out := []byte(`{"type":"` + agentMetadataType + `"`)
	if len(inner) > 0 {
		out = append(append(out, ','), inner...)
	}
	return append(out, '}')
}

// Import adopts sessions run outside flower: path is one JSONL transcript
// (keyed by KeyFromPath when it sits in a projects folder, else as project
// "imported" and the file name as the session id), or a folder: a projects
// folder (<pk>/<session>.jsonl, with subagent files and their .meta.json),
// a config dir holding one, or a single project folder. A corrupt line is
// skipped with a warning naming file and line. It returns how many entries
// it read. Importing a file again adds no entry that has a uuid; the few
// without one (queue-operation, last-prompt, …) are appended again.
func (s *Store) Import(ctx context.Context, path string) (int, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("sessionstore: import: %w", err)
	}
	if !fi.IsDir() {
		key, _, err := KeyFromPath(path)
		if err != nil {
			key = Key{ProjectKey: "imported", SessionID: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))}
		}
		return s.importFile(ctx, key, path)
	}
	files, err := transcriptFiles(path)
	if err != nil {
		return 0, fmt.Errorf("sessionstore: import %s: %w", path, err)
	}
	if len(files) == 0 {
		return 0, fmt.Errorf("sessionstore: import %s: no transcripts (*.jsonl) found", path)
	}
	total := 0
	for _, f := range files {
		n, err := s.importFile(ctx, f.key, f.path)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

type keyedFile struct {
	key  Key
	path string
}

// transcriptFiles finds the transcripts of a projects folder, of a config
// dir (its projects/), or of one project folder.
func transcriptFiles(dir string) ([]keyedFile, error) {
	if fi, err := os.Stat(filepath.Join(dir, "projects")); err == nil && fi.IsDir() {
		dir = filepath.Join(dir, "projects")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	var out []keyedFile
	walk := func(root, projectKey string) error {
		return filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() || !strings.HasSuffix(name, ".jsonl") && !strings.HasSuffix(name, ".meta.json") {
				return nil
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			key, _, err := KeyFromPath(filepath.Join("/projects", projectKey, rel))
			if err != nil {
				return nil // not a transcript (e.g. a stray .meta.json)
			}
			out = append(out, keyedFile{key, p})
			return nil
		})
	}
	// A single project folder holds <session>.jsonl files directly.
	if direct, _ := filepath.Glob(filepath.Join(abs, "*.jsonl")); len(direct) > 0 {
		err = walk(abs, filepath.Base(abs))
	} else {
		var projects []os.DirEntry
		projects, err = os.ReadDir(abs)
		for _, p := range projects {
			if err == nil && p.IsDir() {
				err = walk(filepath.Join(abs, p.Name()), p.Name())
			}
		}
	}
	// Transcripts before their .meta.json, main before subagents.
	sort.SliceStable(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, err
}

// importFile appends one file's entries under key in batches; corrupt lines
// are skipped with a warning.
func (s *Store) importFile(ctx context.Context, key Key, path string) (int, error) {
	if strings.HasSuffix(path, ".meta.json") {
		raw, err := os.ReadFile(path)
		if err != nil {
			return 0, fmt.Errorf("sessionstore: import: %w", err)
		}
		if !json.Valid(raw) {
			s.logf("import: %s: not valid JSON, skipped", path)
			return 0, nil
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return 0, fmt.Errorf("sessionstore: import %s: %w", path, err)
		}
		if err := s.append(ctx, key, []json.RawMessage{agentMetadata(buf.Bytes())}); err != nil {
			return 0, fmt.Errorf("sessionstore: import %s: %w", path, err)
		}
		return 1, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("sessionstore: import: %w", err)
	}
	defer f.Close()
	n, err := s.appendJSONL(ctx, key, f, path)
	if err != nil {
		return n, fmt.Errorf("sessionstore: import %s: %w", path, err)
	}
	return n, nil
}

// appendJSONL appends the JSONL stream r under key, 1000 lines or 8 MiB per
// transaction; name is used in warnings.
func (s *Store) appendJSONL(ctx context.Context, key Key, r io.Reader, name string) (int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), maxLine)
	var batch []json.RawMessage
	size, n, lineNo := 0, 0, 0
	flush := func() error {
		if err := s.append(ctx, key, batch); err != nil {
			return err
		}
		n += len(batch)
		batch, size = nil, 0
		return nil
	}
	for sc.Scan() {
		lineNo++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if !gjson.ValidBytes(b) || b[0] != '{' {
			s.logf("%s:%d: corrupt JSONL line skipped", name, lineNo)
			continue
		}
		batch = append(batch, bytes.Clone(b))
		size += len(b)
		if len(batch) >= 1000 || size >= 8<<20 {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return n, fmt.Errorf("line %d: longer than %d bytes: %w", lineNo+1, maxLine, err)
		}
		return n, err
	}
	return n, flush()
}

// Export writes key's stored entries to w as JSONL, exactly as stored.
// An unknown key fails with ErrNotFound.
func (s *Store) Export(ctx context.Context, key Key, w io.Writer) error {
	entries, err := s.Load(ctx, key)
	if err != nil {
		return err
	}
	if entries == nil {
		return fmt.Errorf("sessionstore: export: %s is not in %s: %w", key, s.path, ErrNotFound)
	}
	if err := WriteJSONL(w, entries); err != nil {
		return fmt.Errorf("sessionstore: export %s: %w", key, err)
	}
	return nil
}

// WriteJSONL writes one entry per line.
func WriteJSONL(w io.Writer, entries []json.RawMessage) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	for _, e := range entries {
		bw.Write(e)
		if err := bw.WriteByte('\n'); err != nil {
			return err
		}
	}
	return bw.Flush()
}
