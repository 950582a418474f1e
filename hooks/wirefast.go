package hooks

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file is flower-hook's hot path without reflection: encoding/json's
// first use in a fresh process (type caches built by reflection) costs
// more than the guard's decision, and flower-hook is a new process on
// every tool call. Each fast function produces exactly what the
// encoding/json path produces, and hands anything it is not sure about
// (escapes, non-ASCII, unusual types) to encoding/json. The input is
// validated by json.Valid (encoding/json's scanner, no reflection) and
// split into members by eachMember, not by a JSON library: gjson, used
// here before, costs every start its own initialisation (its modifier
// table, tidwall/pretty's) and size (docs/performance.md).

// parseInputFast decodes the top-level object data (already known to start
// with '{') like json.Unmarshal into Input does: keys match the field names
// case-insensitively and the last occurrence wins; null leaves a string
// field alone. ok is false when the input needs encoding/json: invalid
// JSON (too deep included), a key with escapes or non-ASCII, a string
// value with escapes, control bytes or invalid UTF-8, or a value of the
// wrong type.
func parseInputFast(data []byte) (in Input, ok bool) {
	if !json.Valid(data) {
		return Input{}, false
	}
	ok = true
	isObject := eachMember(data, func(key, value []byte) bool {
		ok = in.setField(key, value)
		return ok
	})
	return in, ok && isObject
}

// eachMember calls fn with the raw key and the raw value of each member of
// the object data, in order, until fn returns false; data must be valid
// JSON (json.Valid). It reports whether data is an object.
func eachMember(data []byte, fn func(key, value []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	for i = skipSpace(data, i+1); i < len(data) && data[i] == '"'; {
		k := i
		i = skipValue(data, i)
		key := data[k:i]
		i = skipSpace(data, skipSpace(data, i)+1) // the colon
		v := i
		i = skipValue(data, i)
		if !fn(key, data[v:i]) {
			break
		}
		if i = skipSpace(data, i); i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns where the valid JSON value at b[i] ends.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		for depth := 0; i < len(b); {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) && !strings.ContainsRune(",}] \t\n\r", rune(b[i])) {
		i++
	}
	return i
}

// skipString returns where the valid JSON string at b[i] ends.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// setField stores one top-level member; false means "use encoding/json".
func (in *Input) setField(key, value []byte) bool {
	if !plainRaw(string(key)) {
		return false
	}
	k := string(key[1 : len(key)-1])
	if f := in.rawField(k); f != nil {
		*f = append(json.RawMessage(nil), value...)
		return true
	}
	f := in.stringField(k)
	if f == nil || string(value) == "null" {
		return true
	}
	if value[0] != '"' || !plainText(string(value)) {
		return false
	}
	*f = string(value[1 : len(value)-1])
	return true
}

func (in *Input) rawField(k string) *json.RawMessage {
	switch {
	case strings.EqualFold(k, "tool_input"):
		return &in.ToolInput
	case strings.EqualFold(k, "tool_response"):
		return &in.ToolResponse
	}
	return nil
}

func (in *Input) stringField(k string) *string {
	for _, f := range []struct {
		name string
		p    *string
	}{
		{"session_id", &in.SessionID}, {"transcript_path", &in.TranscriptPath}, {"cwd", &in.Cwd},
		{"permission_mode", &in.PermissionMode}, {"hook_event_name", &in.HookEventName},
		{"tool_name", &in.ToolName}, {"tool_use_id", &in.ToolUseID}, {"agent_id", &in.AgentID},
		{"agent_type", &in.AgentType},
	} {
		if strings.EqualFold(k, f.name) {
			return f.p
		}
	}
	return nil
}

// plainRaw reports whether raw is a JSON string literal of printable ASCII
// without escapes: its value is the text between the quotes.
func plainRaw(raw string) bool {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return false
	}
	for i := 1; i < len(raw)-1; i++ {
		if c := raw[i]; c < 0x20 || c >= 0x7f || c == '\\' || c == '"' {
			return false
		}
	}
	return true
}

// appendJSONString appends s as encoding/json writes a string (with its
// default HTML escaping): the same bytes json.Marshal(s) produces.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// marshalOutput is json.Marshal(o) without reflection for the answers
// without raw JSON (pass and deny); ok is false for the others.
func marshalOutput(o Output) (out []byte, ok bool) {
	s := o.HookSpecificOutput
	if s == nil {
		return []byte("{}"), true
	}
	if len(s.UpdatedInput) > 0 || len(s.UpdatedToolOutput) > 0 {
		return nil, false
	}
	// One allocation of about the final size (escapes aside), not a
	// growth through size classes: each new one faults in a page.
	out = make([]byte, 0, 128+len(s.HookEventName)+len(s.PermissionDecision)+len(s.PermissionDecisionReason)*9/8)
	b := appendJSONString(append(out, `{"hookSpecificOutput":{"hookEventName":`...), s.HookEventName)
	if s.PermissionDecision != "" {
		b = appendJSONString(append(b, `,"permissionDecision":`...), s.PermissionDecision)
	}
	if s.PermissionDecisionReason != "" {
		b = appendJSONString(append(b, `,"permissionDecisionReason":`...), s.PermissionDecisionReason)
	}
	return append(b, "}}"...), true
}

// marshalReport is json.Marshal(r) without reflection when every detail
// value is a string, bool or int; ok is false otherwise.
func marshalReport(r Report) (out []byte, ok bool) {
	size := 256
	for _, f := range [...]string{r.Kind, r.Guard, string(r.Decision), r.Tool, r.ToolUseID, r.SessionID, r.AgentID} {
		size += len(f)
	}
	for k, v := range r.Detail {
		size += len(k) + 8
		if s, ok := v.(string); ok {
			size += len(s)
		}
	}
	out = make([]byte, 0, size) // one allocation (see marshalOutput)
	b := strconv.AppendInt(append(out, `{"v":`...), int64(r.V), 10)
	for _, f := range [...][2]string{
		{`,"kind":`, r.Kind}, {`,"guard":`, r.Guard}, {`,"decision":`, string(r.Decision)}, {`,"tool":`, r.Tool},
		{`,"tool_use_id":`, r.ToolUseID}, {`,"session_id":`, r.SessionID}, {`,"agent_id":`, r.AgentID},
	} {
		b = appendJSONString(append(b, f[0]...), f[1])
	}
	if r.Detail == nil {
		return append(b, `,"detail":null}`...), true
	}
	keys := make([]string, 0, len(r.Detail))
	for k := range r.Detail {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, `,"detail":{`...)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(appendJSONString(b, k), ':')
		switch v := r.Detail[k].(type) {
		case string:
			b = appendJSONString(b, v)
		case bool:
			b = strconv.AppendBool(b, v)
		case int:
			b = strconv.AppendInt(b, int64(v), 10)
		default:
			return nil, false
		}
	}
	return append(b, "}}"...), true
}

// bashCommandFast reads tool_input's "command" like bashCommand's
// json.Unmarshal does (case-insensitive key, last one wins, null clears);
// fast is false when encoding/json must decide.
func bashCommandFast(input []byte) (cmd string, found, fast bool) {
	if !json.Valid(input) {
		return "", false, false
	}
	fast = true
	isObject := eachMember(input, func(key, value []byte) bool {
		if !plainRaw(string(key)) {
			fast = false
		} else if strings.EqualFold(string(key[1:len(key)-1]), "command") {
			switch {
			case string(value) == "null":
				cmd, found = "", false
			case value[0] == '"' && plainText(string(value)):
				cmd, found = string(value[1:len(value)-1]), true
			default:
				fast = false
			}
		}
		return fast
	})
	return cmd, found, fast && isObject
}

// plainText reports whether raw is a JSON string literal whose value is
// the valid UTF-8 text between the quotes (no escapes, no control bytes).
func plainText(raw string) bool {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return false
	}
	for i := 1; i < len(raw)-1; i++ {
		if c := raw[i]; c < 0x20 || c == '\\' || c == '"' {
			return false
		}
	}
	return utf8.ValidString(raw)
}
