package hooks_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// docSnippet is one settings.json snippet of the docs.
type docSnippet struct {
	where, json string
}

// settingsSnippets extracts every ```json block with "hooks" in it from
// README.md, plugin/README.md and docs/*.md.
func settingsSnippets(t *testing.T) []docSnippet {
	t.Helper()
	root := testbed.RepoRoot(t)
	files := []string{filepath.Join(root, "README.md"), filepath.Join(root, "plugin", "README.md")}
	more, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	fence := regexp.MustCompile("(?s)```json\n(.*?)```")
	var out []docSnippet
	for _, f := range append(files, more...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range fence.FindAllStringSubmatch(string(data), -1) {
			if strings.Contains(m[1], `"hooks"`) {
				rel, _ := filepath.Rel(root, f)
				out = append(out, docSnippet{where: rel + "#" + strconv.Itoa(i+1), json: m[1]})
			}
		}
	}
	return out
}

// bareSnippet is the form plugin/README.md once gave: with flower-hook
// missing it fails open.
const bareSnippet = `{"hooks":{"PreToolUse":[{"matcher":"Bash|Write|Edit|NotebookEdit",
  "hooks":[{"type":"command","command":"flower-hook delegate --glance","timeout":10}]}]}}`

// TestE2E_DocsSnippetsFailClosed: every settings.json snippet in the READMEs
// and docs/, used as is (its --settings file) on the real CLI with no
// flower-hook anywhere (PATH is /usr/bin:/bin, and the docs' placeholder
// paths do not exist): the main thread's `touch` is denied and nothing
// lands. The control is the bare form: the same run creates the file.
func TestE2E_DocsSnippetsFailClosed(t *testing.T) {
	t.Parallel()
	snippets := settingsSnippets(t)
	if len(snippets) < 2 {
		t.Fatalf("found %d settings snippets in the docs, want README.md's and plugin/README.md's at least", len(snippets))
	}
	for _, sn := range append(snippets, docSnippet{"control: bare form", bareSnippet}) {
		t.Run(sn.where, func(t *testing.T) {
			t.Parallel()
			var v map[string]any
			if err := json.Unmarshal([]byte(sn.json), &v); err != nil {
				t.Fatalf("not valid JSON: %v\n%s", err, sn.json)
			}
			bed := mainBed(t, "docs snippet", bashCall("touch WS/marker.txt", "marker"), scripted.Reply{Text: "snippet done"})
			settings := filepath.Join(bed.Home, "snippet-settings.json")
			if err := os.WriteFile(settings, []byte(sn.json), 0o600); err != nil {
				t.Fatal(err)
			}
			run := runClaude(t, bed, []string{"PATH=/usr/bin:/bin"}, "docs snippet", "--settings", settings, "--allowedTools", "Bash")
			if run.Result.Get("result").String() != "snippet done" {
				t.Fatalf("exit %d result %s stderr %s", run.ExitCode, run.Result.Raw, run.Stderr)
			}
			_, err := os.Stat(filepath.Join(bed.Workspace, "marker.txt"))
			r := lastResult(t, bed.Model.RequestsFor("main")[1])
			if strings.HasPrefix(sn.where, "control") {
				if err != nil || r.IsError {
					t.Errorf("control: the bare form did not fail open: marker %v, result %+v", err, r)
				}
				return
			}
			if err == nil || !r.IsError || !strings.Contains(r.Content, "denied") {
				t.Errorf("the snippet let the main thread's Bash through with flower-hook missing: marker made %v, result %+v", err == nil, r)
			}
		})
	}
}
