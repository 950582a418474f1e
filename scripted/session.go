package scripted

import (
	"encoding/json"
	"net/http"

	"github.com/tidwall/gjson"
)

// sessionOf names the claude session a request belongs to: the
// X-Claude-Code-Session-Id header claude sends on every Messages call, else
// the session_id inside metadata.user_id (a JSON string). A request naming
// neither (curl, a test) belongs to the "" session.
func sessionOf(hr *http.Request, body []byte) string {
	if id := hr.Header.Get("X-Claude-Code-Session-Id"); id != "" {
		return id
	}
	uid := gjson.GetBytes(body, "metadata.user_id").String()
	if uid == "" || !gjson.Valid(uid) {
		return ""
	}
	return gjson.Get(uid, "session_id").String()
}

// auxiliaryReply is the built-in answer to claude's helper calls. When the
// request asks for JSON output by schema (the session title does: {"title":
// …}), the text is an object with every required property filled;
// otherwise it is plain text.
func auxiliaryReply(req Request) Reply {
	schema := req.get("output_config.format.schema")
	if !schema.Exists() {
		schema = req.get("output_format.schema")
	}
	if !schema.Exists() {
		return Reply{Text: "Scripted session"}
	}
	b, _ := json.Marshal(sampleOf(schema))
	return Reply{Text: string(b)}
}

// sampleOf builds a value that fits a simple JSON schema: objects get their
// required properties, strings "Scripted session", numbers 0, booleans
// false, arrays empty.
func sampleOf(schema gjson.Result) any {
	switch schema.Get("type").String() {
	case "object":
		obj := map[string]any{}
		for _, name := range schema.Get("required").Array() {
			obj[name.String()] = sampleOf(schema.Get("properties." + gjson.Escape(name.String())))
		}
		return obj
	case "array":
		return []any{}
	case "number", "integer":
		return 0
	case "boolean":
		return false
	case "null":
		return nil
	}
	if enum := schema.Get("enum").Array(); len(enum) > 0 {
		return enum[0].Value()
	}
	return "Scripted session"
}
