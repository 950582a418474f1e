package sessionstore

import (
	"strings"
	"unicode/utf8"
	"unsafe"
)

// The load pipeline works in two passes over a transcript, so that a
// session of any size is never held in memory more than once (Materialize
// streams both passes from SQLite):
//
//  1. scan: the facts of every line — type, uuid, parentUuid, message id,
//     tool_use / tool_result ids, result sizes, denial marks — are read.
//     They were derived once, when the line was appended (parseLine), and
//     stored beside it (the facts column, see facts.go), so this pass reads
//     a few bytes per line, not the line. The plan is made from them: which
//     results expire, which are trimmed, which denials are pruned, which
//     lines are relinked, where synthetic results go.
//  2. render: the lines are read again; a line the plan does not touch is
//     passed on as the very bytes that were stored, a touched one is edited
//     by splicing new values into its bytes.

// source yields a transcript's entries in order. The bytes given to each
// are only valid during the call.
type source func(each func(raw []byte) error) error

// lineMeta is what the scan keeps of one line.
type lineMeta struct {
	typ       string
	uuid      string
	parent    string // parentUuid ("" for null or absent)
	hasParent bool   // a parentUuid member exists (it can be relinked)
	msgID     string // assistant: message.id
	turn      int    // assistant: its turn (set by the scanner)
	blocks    int    // content blocks
	uses      []useMeta
	results   []resultMeta
	denial    bool // a permission-denied tool_result line
	compact   bool // isCompactSummary: never touched
}

type useMeta struct {
	id, name, cmd string // cmd: Bash's input.command
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

// newScanner makes a scanner for about n lines (a size hint: growing the
// table as lines come costs more than the scan itself on big sessions).
func newScanner(n int) *scanner {
	return &scanner{lines: make([]lineMeta, 0, n), toolUses: make(map[string]toolUse, n/8), turnOf: make(map[string]int, n/4)}
}

// add takes the next line's facts: it numbers the turns and indexes the
// tool calls.
func (sc *scanner) add(m lineMeta) {
	i := len(sc.lines)
	m.turn = -1
	if m.typ == "assistant" {
		if n, ok := sc.turnOf[m.msgID]; ok && m.msgID != "" {
			m.turn = n
		} else {
			m.turn = sc.turns
			if m.msgID != "" {
				sc.turnOf[m.msgID] = sc.turns
			}
			sc.turns++
		}
		for _, u := range m.uses {
			sc.toolUses[u.id] = toolUse{line: i, turn: m.turn, name: u.name, cmd: u.cmd}
		}
	}
	sc.lines = append(sc.lines, m)
}

// parseLine derives a line's facts from its JSON text (valid JSON: entries
// are validated on append). Strings it keeps are copied out of raw.
func parseLine(raw []byte) lineMeta {
	var m lineMeta
	var msg, denialKind, decision string
	members(view(raw), func(k, v string) bool {
		switch k {
		case "type":
			m.typ = internType(str(v))
		case "uuid":
			m.uuid = clone(str(v))
		case "parentUuid":
			m.parent, m.hasParent = clone(str(v)), true
		case "message":
			msg = v
		case "isCompactSummary":
			m.compact = v == "true"
		case "toolDenialKind":
			denialKind = str(v)
		case "permissionDecision":
			decision = str(member(v, "decision"))
		}
		return true
	})
	if (m.typ == "user" || m.typ == "assistant") && msg != "" {
		parseMessage(&m, msg)
		if m.typ == "user" && len(m.results) > 0 && (denialKind != "" || decision == "reject") {
			m.denial = true
		}
	}
	return m
}

func parseMessage(m *lineMeta, msg string) {
	var content string
	members(msg, func(k, v string) bool {
		switch k {
		case "id":
			if m.typ == "assistant" {
				m.msgID = clone(str(v))
			}
		case "content":
			content = v
		}
		return true
	})
	if !strings.HasPrefix(content, "[") {
		return
	}
	elements(content, func(b string) bool {
		m.blocks++
		var typ, id, name, cmd, useID, body string
		members(b, func(k, v string) bool {
			switch k {
			case "type":
				typ = str(v)
			case "id":
				id = v
			case "name":
				name = v
			case "tool_use_id":
				useID = v
			case "content":
				body = v
			case "input":
				cmd = member(v, "command")
			}
			return true
		})
		switch {
		case typ == "tool_use" && m.typ == "assistant":
			m.uses = append(m.uses, useMeta{id: clone(str(id)), name: clone(str(name)), cmd: clone(str(cmd))})
		case typ == "tool_result" && m.typ == "user":
			chars, only := textRunes(body)
			m.results = append(m.results, resultMeta{id: clone(str(useID)), chars: chars, text: only})
		}
		return true
	})
}

// textRunes is the length in characters of a tool_result content's text
// (see plainText), counted on the JSON text without decoding it.
func textRunes(c string) (n int, only bool) {
	only = textParts(c, func(t string) { n += jsonStringRunes(t) })
	return n, only
}

// textParts calls f with the raw JSON string of each part of a tool_result
// content's text: the content itself when it is a string, else the text of
// each of its text blocks. only is false when the content is neither, or a
// block is not text (an image, a document).
func textParts(c string, f func(raw string)) (only bool) {
	if strings.HasPrefix(c, "\"") {
		f(c)
		return true
	}
	if !strings.HasPrefix(c, "[") {
		return false
	}
	only = true
	elements(c, func(blk string) bool {
		var typ, text string
		members(blk, func(k, v string) bool {
			switch k {
			case "type":
				typ = str(v)
			case "text":
				text = v
			}
			return true
		})
		if typ == "text" {
			f(text)
		} else {
			only = false
		}
		return true
	})
	return only
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
