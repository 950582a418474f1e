package sessionstore

import (
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/internal/textclip"
)

// FoldSummary is the default summary fold, the Go counterpart of the SDK's
// fold_session_summary: what a session list shows without loading the
// transcript. It keeps session_id, counts entries, and takes the first and
// last prompt text, the newest custom title / summary line, cwd, git branch
// and the first and last entry timestamps. prev is never modified.
func FoldSummary(prev map[string]any, key Key, entries []json.RawMessage) map[string]any {
	out := make(map[string]any, len(prev)+8)
	for k, v := range prev {
		out[k] = v
	}
	out["session_id"] = key.SessionID
	n, _ := out["entries"].(float64)
	out["entries"] = n + float64(len(entries))
	for _, e := range entries {
		// Read in place (an entry may carry a model text of many
		// megabytes); what the summary keeps is cloned.
		r := gjson.Parse(view(e))
		if ts := strings.Clone(r.Get("timestamp").String()); ts != "" {
			if _, ok := out["created_at"]; !ok {
				out["created_at"] = ts
			}
			out["updated_at"] = ts
		}
		for _, f := range [...]struct{ from, to string }{{"cwd", "cwd"}, {"gitBranch", "git_branch"}} {
			if v := r.Get(f.from).String(); v != "" {
				out[f.to] = strings.Clone(v)
			}
		}
		switch r.Get("type").String() {
		case "custom-title":
			if v := r.Get("customTitle").String(); v != "" {
				out["custom_title"] = strings.Clone(v)
			}
		case "summary":
			if v := r.Get("summary").String(); v != "" {
				out["summary"] = strings.Clone(v)
			}
		case "user":
			if r.Get("isMeta").Bool() || r.Get("isCompactSummary").Bool() || r.Get("toolUseResult").Exists() {
				continue
			}
			text := promptText(r.Get("message.content"))
			if text == "" {
				continue
			}
			if _, ok := out["first_prompt"]; !ok {
				out["first_prompt"] = strings.Clone(textclip.Runes(text, 200))
			}
			out["last_prompt"] = strings.Clone(textclip.Runes(text, 200))
		}
	}
	return out
}

// promptText is the text of a user message's content (a string or blocks).
func promptText(c gjson.Result) string {
	if c.Type == gjson.String {
		return strings.TrimSpace(c.Str)
	}
	var b strings.Builder
	c.ForEach(func(_, blk gjson.Result) bool {
		if blk.Get("type").String() == "text" {
			b.WriteString(blk.Get("text").String())
		}
		return true
	})
	return strings.TrimSpace(b.String())
}
