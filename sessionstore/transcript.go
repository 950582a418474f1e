package sessionstore

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"
)

// The load pipeline works in two passes over a transcript, so that a
// session of any size is never held in memory more than once (Materialize
// streams both passes from SQLite):
//
//  1. scan: every line is skimmed (gjson, no full decode) for its type,
//     uuid, parentUuid, turn, tool_use / tool_result ids and denial marks,
//     and the size of long results. The plan is then made from these facts:
//     which results expire, which are trimmed, which denials are pruned,
//     which lines are relinked, where synthetic results go.
//  2. render: the lines are read again; a line the plan does not touch is
//     passed on as the very bytes that were stored, a touched one is edited
//     by splicing new values into its bytes.

// source yields a transcript's entries in order. The bytes given to each
// are only valid during the call.
type source func(each func(raw []byte) error) error

func sliceSource(entries []json.RawMessage) source {
	return func(each func(raw []byte) error) error {
		for _, e := range entries {
			if err := each(e); err != nil {
				return err
			}
		}
		return nil
	}
}

// lineMeta is what the scan keeps of one line.
type lineMeta struct {
	typ       string
	uuid      string
	parent    string // parentUuid ("" for null or absent)
	hasParent bool   // a parentUuid member exists (it can be relinked)
	msgID     string // assistant: message.id
	turn      int    // assistant: its turn
	blocks    int    // content blocks
	uses      []string
	results   []resultMeta
	denial    bool // a permission-denied tool_result line
	compact   bool // isCompactSummary: never touched
}

type resultMeta struct {
	id    string // tool_use_id
	chars int    // plain-text length in characters
	text  bool   // content is plain text only (no image / document block)
}

type toolUse struct {
	line, turn int
	name, cmd  string
}

// view returns raw as a string without copying; raw must not change while
// the string is in use.
func view(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(raw), len(raw))
}

// scanner accumulates pass-1 facts.
type scanner struct {
	lines    []lineMeta
	toolUses map[string]toolUse
	turnOf   map[string]int
	turns    int
}

func newScanner() *scanner {
	return &scanner{toolUses: map[string]toolUse{}, turnOf: map[string]int{}}
}

func (sc *scanner) scan(raw []byte) {
	i := len(sc.lines)
	line := view(raw)
	m := lineMeta{turn: -1, typ: internType(gjson.Get(line, "type").Str)}
	if m.typ != "user" && m.typ != "assistant" {
		// Only the parent matters here (for relinking); it comes first in
		// the CLI's lines, so this stops early.
		if par := gjson.Get(line, "parentUuid"); par.Exists() {
			m.parent, m.hasParent = clone(par.Str), true
		}
		sc.lines = append(sc.lines, m)
		return
	}
	var msg, denialKind, decision gjson.Result
	gjson.Parse(line).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "uuid":
			m.uuid = v.Str
		case "parentUuid":
			m.parent, m.hasParent = v.Str, true
		case "message":
			msg = v
		case "isCompactSummary":
			m.compact = v.Bool()
		case "toolDenialKind":
			denialKind = v
		case "permissionDecision":
			decision = v.Get("decision")
		}
		return true
	})
	m.uuid, m.parent = clone(m.uuid), clone(m.parent)
	if msg.Exists() {
		sc.scanMessage(i, &m, msg)
		if m.typ == "user" && len(m.results) > 0 && (denialKind.String() != "" || decision.String() == "reject") {
			m.denial = true
		}
	}
	sc.lines = append(sc.lines, m)
}

func (sc *scanner) scanMessage(i int, m *lineMeta, msg gjson.Result) {
	if m.typ == "assistant" {
		m.msgID = clone(msg.Get("id").String())
		switch n, ok := sc.turnOf[m.msgID]; {
		case ok && m.msgID != "":
			m.turn = n
		default:
			m.turn = sc.turns
			if m.msgID != "" {
				sc.turnOf[m.msgID] = sc.turns
			}
			sc.turns++
		}
	}
	c := msg.Get("content")
	if !c.IsArray() {
		return
	}
	c.ForEach(func(_, b gjson.Result) bool {
		m.blocks++
		switch b.Get("type").Str {
		case "tool_use":
			if m.typ != "assistant" {
				break
			}
			id := clone(b.Get("id").String())
			tu := toolUse{line: i, turn: m.turn, name: clone(b.Get("name").String())}
			if cmd := b.Get("input.command"); cmd.Type == gjson.String {
				tu.cmd = clone(cmd.Str)
			}
			m.uses = append(m.uses, id)
			sc.toolUses[id] = tu
		case "tool_result":
			if m.typ != "user" {
				break
			}
			chars, only := textRunes(b.Get("content"))
			m.results = append(m.results, resultMeta{id: clone(b.Get("tool_use_id").String()), chars: chars, text: only})
		}
		return true
	})
}

// textRunes is the length in characters of a tool_result content's text
// (see plainText), counted on the JSON text without decoding it.
func textRunes(c gjson.Result) (n int, only bool) {
	if c.Type == gjson.String {
		return jsonStringRunes(c.Raw), true
	}
	if !c.IsArray() {
		return 0, false
	}
	only = true
	c.ForEach(func(_, blk gjson.Result) bool {
		if blk.Get("type").Str == "text" {
			n += jsonStringRunes(blk.Get("text").Raw)
		} else {
			only = false
		}
		return true
	})
	return n, only
}

// jsonStringRunes counts the characters a JSON string literal decodes to;
// an escape is one character, a surrogate pair too.
func jsonStringRunes(raw string) int {
	if len(raw) < 2 || raw[0] != '"' {
		return 0
	}
	n := 0
	for i := 1; i < len(raw)-1; i++ {
		c := raw[i]
		switch {
		case c == '\\':
			n++
			if i+1 < len(raw)-1 && raw[i+1] == 'u' {
				// A high surrogate followed by \uDC00-\uDFFF is one character.
				if i+12 <= len(raw)-1 && (raw[i+2] == 'd' || raw[i+2] == 'D') && strings.ContainsRune("89abAB", rune(raw[i+3])) &&
					raw[i+6] == '\\' && raw[i+7] == 'u' {
					i += 11
				} else {
					i += 5
				}
			} else {
				i++
			}
		case c < utf8.RuneSelf || c&0xC0 != 0x80:
			n++
		}
	}
	return n
}

// age is how many turns came after the turn of the tool_use with this id;
// -1 when the tool_use is not in this transcript.
func (sc *scanner) age(toolUseID string) int {
	tu, ok := sc.toolUses[toolUseID]
	if !ok {
		return -1
	}
	return sc.turns - 1 - tu.turn
}

// clone copies s out of the line it views.
func clone(s string) string {
	if s == "" {
		return ""
	}
	return string(append([]byte(nil), s...))
}

func internType(t string) string {
	switch t {
	case "user":
		return "user"
	case "assistant":
		return "assistant"
	}
	return clone(t)
}
