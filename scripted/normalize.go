package scripted

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/internal/lazyre"
	"github.com/flowerhq/flower/internal/textclip"
)

// The normalized key of a Messages request is what a cassette matches on:
//
//   - only model, system, tools and messages count (metadata, max_tokens,
//     thinking, stream, output_config and the like do not);
//   - the system block holding claude's x-anthropic-billing-header is dropped;
//   - every cache_control mark is dropped;
//   - in every string: the working directory claude reports ("Primary
//     working directory: …") becomes <cwd> and its mangled form (the
//     transcript folder name) <cwd-mangled>; a path under the temp directory
//     ($TMPDIR, /tmp, /var/folders) becomes <tmp>; flower's portable project
//     folder (projects/<name>-<8 hex>) projects/<project>; UUIDs (session
//     ids) become <uuid>, subagent ids (a + 16 hex) <agent>, the value of a
//     duration_ms <n>; date-times <time>, dates <date>; the "OS Version:"
//     line's value <os>.
//
// Everything else — the prompt, the tools' schemas, every tool result —
// must be the same for a recorded exchange to answer.

var (
	cwdLine    = lazyre.New(`Primary working directory: ((?:[^\s\\"]|\\[^n])+)`)
	uuidRe     = lazyre.New(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
	timeRe     = lazyre.New(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?`)
	dateRe     = lazyre.New(`\b\d{4}-\d{2}-\d{2}\b|\b\d{4}/\d{2}/\d{2}\b`)
	osVersion  = lazyre.New(`(OS Version: )[^\n]*`)
	agentIDRe  = lazyre.New(`\ba[0-9a-f]{16}\b`)
	durationRe = lazyre.New(`(duration_ms"?:\s*)\d+`)
	projectRe  = lazyre.New(`(projects/)[A-Za-z0-9_-]*-[0-9a-f]{8}\b`)
)

// tempRoots are the prefixes of temporary paths, longest first.
func tempRoots() []string {
	roots := []string{"/tmp", "/private/tmp", "/var/folders", "/private/var/folders"}
	if d := strings.TrimSuffix(os.TempDir(), "/"); d != "" {
		roots = append(roots, d)
		if r, err := filepath.EvalSymlinks(d); err == nil {
			roots = append(roots, r)
		}
	}
	sort.Slice(roots, func(i, j int) bool { return len(roots[i]) > len(roots[j]) })
	return roots
}

// normalizer rewrites the volatile parts of one request's strings.
type normalizer struct {
	cwd, mangled string
	tmp          *regexp.Regexp
}

func newNormalizer(body []byte) normalizer {
	n := normalizer{cwd: cwdOf(body)}
	if n.cwd != "" {
		n.mangled = ProjectDirName(n.cwd)
	}
	var alts []string
	for _, r := range tempRoots() {
		alts = append(alts, regexp.QuoteMeta(r))
	}
	// a temp root and the rest of the path below it
	n.tmp = regexp.MustCompile(`(?:` + strings.Join(alts, "|") + `)(?:/[^\s"'<>:|;` + "`" + `()\[\]{}]*)?`)
	return n
}

// cwdOf is the working directory claude reports in the request, or "".
func cwdOf(body []byte) string {
	if m := cwdLine().FindSubmatch(body); m != nil {
		// the body is JSON: undo the escaping of the path's characters
		var s string
		if json.Unmarshal([]byte(`"`+string(m[1])+`"`), &s) == nil {
			return strings.TrimSpace(s)
		}
		return string(m[1])
	}
	return ""
}

// ProjectDirName is the folder claude keeps dir's transcripts in, under
// <config>/projects/: every character that is not a letter or digit becomes
// '-'. (Cassettes rewrite it from one machine's workspace to another's.)
func ProjectDirName(dir string) string {
	b := []byte(dir)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

func (n normalizer) text(s string) string {
	if n.cwd != "" {
		s = strings.ReplaceAll(s, n.cwd, "<cwd>")
		s = strings.ReplaceAll(s, n.mangled, "<cwd-mangled>")
	}
	s = n.tmp.ReplaceAllString(s, "<tmp>")
	s = projectRe().ReplaceAllString(s, "${1}<project>")
	s = uuidRe().ReplaceAllString(s, "<uuid>")
	s = agentIDRe().ReplaceAllString(s, "<agent>")
	s = durationRe().ReplaceAllString(s, "${1}<n>")
	s = timeRe().ReplaceAllString(s, "<time>")
	s = dateRe().ReplaceAllString(s, "<date>")
	return osVersion().ReplaceAllString(s, "${1}<os>")
}

// value turns a JSON value into its normalized Go form.
func (n normalizer) value(v gjson.Result) any {
	switch {
	case v.IsArray():
		out := []any{}
		for _, e := range v.Array() {
			out = append(out, n.value(e))
		}
		return out
	case v.IsObject():
		out := map[string]any{}
		v.ForEach(func(k, e gjson.Result) bool {
			if k.String() != "cache_control" {
				out[k.String()] = n.value(e)
			}
			return true
		})
		return out
	case v.Type == gjson.String:
		return n.text(v.String())
	default:
		return v.Value()
	}
}

// keyParts are the fields of a request that its key is made of, in the
// order a difference is looked for.
var keyParts = []string{"model", "system", "tools", "messages"}

// NormalizedRequest is the normalized form of a Messages request body: the
// fields its key is made of, volatile parts rewritten (see the rules above).
func NormalizedRequest(body []byte) map[string]any {
	n := newNormalizer(body)
	out := map[string]any{}
	for _, part := range keyParts {
		v := gjson.GetBytes(body, part)
		if !v.Exists() {
			continue
		}
		if part == "system" && v.IsArray() {
			var blocks []any
			for _, b := range v.Array() {
				if !strings.HasPrefix(b.Get("text").String(), "x-anthropic-billing-header:") {
					blocks = append(blocks, n.value(b))
				}
			}
			out[part] = blocks
			continue
		}
		out[part] = n.value(v)
	}
	return out
}

// RequestKey is the cassette key of a Messages request body: "sha256:" and
// the hash of its normalized form.
func RequestKey(body []byte) string {
	b, _ := json.Marshal(NormalizedRequest(body))
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// leaf is one scalar of a normalized request with its path.
type leaf struct {
	path string
	val  any
}

// leaves flattens a normalized request in a fixed order: keyParts first,
// then object keys sorted, arrays by index.
func leaves(norm map[string]any) []leaf {
	var out []leaf
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			if len(keys) == 0 {
				out = append(out, leaf{path, "{}"})
			}
			for _, k := range keys {
				walk(path+"."+k, x[k])
			}
		case []any:
			out = append(out, leaf{path + ".length", len(x)})
			for i, e := range x {
				walk(path+"["+strconv.Itoa(i)+"]", e)
			}
		default:
			out = append(out, leaf{path, x})
		}
	}
	for _, part := range keyParts {
		v, ok := norm[part]
		if !ok {
			v = nil
		}
		walk(part, v)
	}
	return out
}

// difference is where two normalized requests first part: the leaf index
// and, for two strings there, the length of their common prefix (bigger
// is closer).
type difference struct {
	index, common int
	path          string
	recorded, got any
}

// firstDifference compares a recorded request's leaves with a new one's;
// ok is false when they are the same.
func firstDifference(recorded, got []leaf) (difference, bool) {
	for i := 0; i < len(recorded) || i < len(got); i++ {
		var r, g leaf
		if i < len(recorded) {
			r = recorded[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if r.path == g.path && fmt.Sprint(r.val) == fmt.Sprint(g.val) && (r.val == nil) == (g.val == nil) {
			continue
		}
		d := difference{index: i, path: g.path, recorded: r.val, got: g.val}
		if d.path == "" {
			d.path = r.path
		}
		if r.path != g.path {
			d.path = "(" + r.path + " vs " + g.path + ")"
			if i < len(recorded) && i < len(got) {
				d.recorded, d.got = r.path, g.path
			}
		}
		rs, rok := r.val.(string)
		gs, gok := g.val.(string)
		if rok && gok && r.path == g.path {
			d.common = commonPrefix(rs, gs)
		}
		return d, true
	}
	return difference{}, false
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// describe renders the difference in one line: the path, then both sides
// around the point where they part.
func (d difference) describe() string {
	rs, rok := d.recorded.(string)
	gs, gok := d.got.(string)
	if rok && gok {
		return fmt.Sprintf("%s: recorded %q, got %q", d.path, around(rs, d.common), around(gs, d.common))
	}
	show := func(v any) string {
		if v == nil {
			return "nothing"
		}
		if s, ok := v.(string); ok {
			return strconv.Quote(textclip.Bytes(s, 80))
		}
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("%s: recorded %s, got %s", d.path, show(d.recorded), show(d.got))
}

// around is s from a little before byte at to a little after, cut on rune
// boundaries, with "…" where it was cut.
func around(s string, at int) string {
	const before, after = 40, 60
	start, end := at-before, at+after
	prefix, suffix := "…", "…"
	if start <= 0 {
		start, prefix = 0, ""
	}
	if end >= len(s) {
		end, suffix = len(s), ""
	}
	for start > 0 && start < len(s) && !utf8.RuneStart(s[start]) {
		start--
	}
	for end < len(s) && !utf8.RuneStart(s[end]) {
		end++
	}
	return prefix + s[start:end] + suffix
}
