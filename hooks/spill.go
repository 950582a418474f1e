package hooks

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/flowerhq/flower/internal/atomicfile"
	"github.com/flowerhq/flower/internal/lazyre"
	"github.com/flowerhq/flower/internal/redact"
	"github.com/flowerhq/flower/internal/textclip"
)

// SpillConfig configures the spill guard.
type SpillConfig struct {
	// Dir is the workbench root; spill files go to Dir/spill/.
	Dir string
	// Threshold is the length in characters above which a text field spills.
	Threshold int
	// Tools matches the tools whose output is looked at (BulkyTools).
	Tools *Matcher
	// MainOnly leaves subagents' outputs alone.
	MainOnly bool
}

// spillDir returns the directory spill files of workbench root dir go to.
func spillDir(dir string) string { return filepath.Join(dir, "spill") }

// spillName matches a spill file name anywhere in a tool input.
// (compiled on first use: most runs never need it).
var spillName = lazyre.New(`spill/[0-9a-f]{16}\.txt`)

// Spill is the spill guard (PostToolUse). When a string field of the tool's
// output object (found through nested objects, never through lists, which
// may hold image blocks) is longer than the threshold, the full text is
// written to Dir/spill/<SpillName>.txt and the field is replaced by a
// pointer line plus its first SpillPreviewChars characters. Everything else
// in the object is kept, so the replacement has the tool's own output shape
// (the CLI ignores an updatedToolOutput of another shape). Output that is
// not an object, image data, and any call that reads a spill file back
// (a Read of it, a cat of it: spilling it again would loop forever) pass
// untouched. The guard fails open: on any error the original output stands.
func Spill(in Input, cfg SpillConfig) Decision {
	if cfg.MainOnly && !in.IsMainThread() {
		return Decision{Verdict: Pass, Detail: map[string]any{"subagent": true}}
	}
	if cfg.Tools != nil && !cfg.Tools.MatchString(in.ToolName) {
		return Decision{Verdict: Pass}
	}
	dir, err := filepath.Abs(spillDir(cfg.Dir))
	if err != nil {
		return Decision{Verdict: Pass, Detail: map[string]any{"error": err.Error()}}
	}
	if readsSpill(in.ToolInput, dir) {
		return Decision{Verdict: Pass, Detail: map[string]any{"readback": true}}
	}
	resp := bytes.TrimSpace(in.ToolResponse)
	if len(resp) == 0 || resp[0] != '{' {
		return Decision{Verdict: Pass, Detail: map[string]any{"shape": "not an object"}}
	}
	dec := json.NewDecoder(bytes.NewReader(resp))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return Decision{Verdict: Pass, Detail: map[string]any{"error": err.Error()}}
	}
	threshold := cfg.Threshold
	if threshold <= 0 {
		threshold = DefaultSpillThreshold
	}
	s := spiller{dir: dir, threshold: threshold}
	s.walk(obj)
	if s.err != nil {
		return Decision{Verdict: Pass, Detail: map[string]any{"error": s.err.Error()}}
	}
	if len(s.files) == 0 {
		return Decision{Verdict: Pass}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return Decision{Verdict: Pass, Detail: map[string]any{"error": err.Error()}}
	}
	return Decision{Verdict: Rewrite, UpdatedToolOutput: bytes.TrimSpace(buf.Bytes()),
		Detail: map[string]any{"files": s.files, "fields": s.fields, "chars": s.chars}}
}

// readsSpill reports whether any string in the tool input names the spill
// directory or a spill file.
func readsSpill(input json.RawMessage, dir string) bool {
	if len(input) == 0 {
		return false
	}
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		resolved = dir
	}
	found := false
	var visit func(v any)
	visit = func(v any) {
		switch v := v.(type) {
		case string:
			if strings.Contains(v, dir) || strings.Contains(v, resolved) || spillName().MatchString(v) {
				found = true
			}
		case map[string]any:
			for _, x := range v {
				visit(x)
			}
		case []any:
			for _, x := range v {
				visit(x)
			}
		}
	}
	var v any
	if json.Unmarshal(input, &v) != nil {
		return false
	}
	visit(v)
	return found
}

type spiller struct {
	dir       string
	threshold int
	files     []string
	fields    []string
	chars     int
	err       error
}

// walk replaces long strings in obj and its nested objects. It does not
// enter lists, objects whose "type" is not "text" (image, pdf: base64
// data), or outputs flagged isImage.
func (s *spiller) walk(obj map[string]any) {
	if t, ok := obj["type"].(string); ok && t != "text" {
		return
	}
	if img, _ := obj["isImage"].(bool); img {
		return
	}
	for k, v := range obj {
		if s.err != nil {
			return
		}
		switch v := v.(type) {
		case map[string]any:
			s.walk(v)
		case string:
			if k == "base64" || utf8.RuneCountInString(v) <= s.threshold {
				continue
			}
			path, err := writeSpill(s.dir, v)
			if err != nil {
				s.err = err
				return
			}
			obj[k] = SpillPointer(path, v)
			s.files = append(s.files, path)
			s.fields = append(s.fields, k)
			s.chars += utf8.RuneCountInString(v)
		}
	}
}

// spillPointerFormat is the pointer line (characters, file, preview
// length) and the preview: the model reads it, so it is Chinese.
const spillPointerFormat = "[输出太长,已转存: 共 %d 字,全文在 %s(需要时用 Read 读取)。下面是前 %d 字:]\n%s"

// SpillPointer is what stays in context for a spilled text: one pointer
// line, then the first SpillPreviewChars characters.
func SpillPointer(path, text string) string {
	preview := textclip.Runes(text, SpillPreviewChars)
	return fmt.Sprintf(spillPointerFormat, utf8.RuneCountInString(text), path, SpillPreviewChars, preview)
}

// SpillName is the name of text's spill file without ".txt": 16 hex
// digits of its FNV-1a (128-bit) hash. Not SHA-256: package crypto/sha256
// brings the FIPS 140 module, whose initialisation and size cost
// flower-hook's start on every tool call (docs/performance.md). A
// collision is harmless: writeSpill reuses a file only when it holds the
// same text.
func SpillName(text string) string {
	h := fnv.New128a()
	_, _ = h.Write([]byte(text))
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// writeSpill stores text as dir/<SpillName>.txt (content-addressed, so a
// repeat is a no-op; a file of that name with other content is an error,
// and the original output stands) and returns the path.
// Credentials in it are replaced first (redact.FromEnv of this process's
// environment, which claude passed down, and token shapes): a spill file
// keeps no secret.
// It refuses when the spill folder or the file is a symlink or resolves
// outside the workbench (dir's parent): the caller then keeps the original
// output.
func writeSpill(dir, text string) (string, error) {
	text = redact.FromEnv(os.Environ()).String(text)
	path := filepath.Join(dir, SpillName(text)+".txt")
	root := filepath.Dir(dir)
	if err := confined(root, dir); err != nil {
		return "", fmt.Errorf("hooks: spill: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("hooks: spill: %w", err)
	}
	// Checked again now that it exists, and the file itself: a planted
	// link under the content's name would otherwise be taken as the file.
	if err := confined(root, dir); err != nil {
		return "", fmt.Errorf("hooks: spill: %w", err)
	}
	if err := confined(root, path); err != nil {
		return "", fmt.Errorf("hooks: spill: %w", err)
	}
	if old, err := os.ReadFile(path); err == nil {
		if string(old) != text {
			return "", fmt.Errorf("hooks: spill: %s holds another text", path)
		}
		return path, nil
	}
	if err := atomicfile.Write(path, []byte(text), 0o600); err != nil {
		return "", fmt.Errorf("hooks: spill: %w", err)
	}
	return path, nil
}
