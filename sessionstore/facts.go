package sessionstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"strconv"
	"strings"
)

// Facts: what the load pipeline needs to know about a line (lineMeta, see
// parseLine), derived when the line is appended and stored in the entries
// row's facts column, ahead of the entry itself. Reading them back touches a
// few dozen bytes per row instead of the row's whole entry, which makes the
// planning pass of a resume nearly free. The entry stays the truth: a row
// whose facts are missing or of another version is parsed again on load.
//
// Encoding (version f1): fields separated by \x1e —
// f1, type, uuid, parent ("-" absent, "=" + value), message id, block count,
// flags ("d" denial, "c" compact), tool uses (id \x1f name \x1f command as
// a JSON string, separated by \x1d), tool results (id \x1f chars \x1f 1|0).

const factsVersion = "f1\x1e"

// encodeFacts renders m; "" when a value cannot be stored safely (the row
// is then parsed on every load).
func encodeFacts(m lineMeta) string {
	for _, v := range []string{m.typ, m.uuid, m.parent, m.msgID} {
		if !plain(v) {
			return ""
		}
	}
	var b strings.Builder
	b.WriteString(factsVersion)
	b.WriteString(m.typ)
	b.WriteByte('\x1e')
	b.WriteString(m.uuid)
	b.WriteByte('\x1e')
	if m.hasParent {
		b.WriteByte('=')
		b.WriteString(m.parent)
	} else {
		b.WriteByte('-')
	}
	b.WriteByte('\x1e')
	b.WriteString(m.msgID)
	b.WriteByte('\x1e')
	b.WriteString(strconv.Itoa(m.blocks))
	b.WriteByte('\x1e')
	if m.denial {
		b.WriteByte('d')
	}
	if m.compact {
		b.WriteByte('c')
	}
	b.WriteByte('\x1e')
	for i, u := range m.uses {
		if !plain(u.id) || !plain(u.name) {
			return ""
		}
		if i > 0 {
			b.WriteByte('\x1d')
		}
		cmd, _ := json.Marshal(u.cmd)
		b.WriteString(u.id + "\x1f" + u.name + "\x1f")
		b.Write(cmd)
	}
	b.WriteByte('\x1e')
	for i, r := range m.results {
		if !plain(r.id) {
			return ""
		}
		if i > 0 {
			b.WriteByte('\x1d')
		}
		text := "0"
		if r.text {
			text = "1"
		}
		b.WriteString(r.id + "\x1f" + strconv.Itoa(r.chars) + "\x1f" + text)
	}
	return b.String()
}

// plain: no control characters, so the separators stay unambiguous.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 {
			return false
		}
	}
	return true
}

// decodeFacts parses encodeFacts' output; ok is false for anything else.
func decodeFacts(f string) (m lineMeta, ok bool) {
	if !strings.HasPrefix(f, factsVersion) {
		return m, false
	}
	parts := strings.Split(f[len(factsVersion):], "\x1e")
	if len(parts) != 8 || parts[2] == "" {
		return m, false
	}
	m.typ = internType(parts[0])
	m.uuid = parts[1]
	m.hasParent, m.parent = parts[2][0] == '=', parts[2][1:]
	m.msgID = parts[3]
	m.blocks, _ = strconv.Atoi(parts[4])
	m.denial = strings.Contains(parts[5], "d")
	m.compact = strings.Contains(parts[5], "c")
	if parts[6] != "" {
		for _, u := range strings.Split(parts[6], "\x1d") {
			f := strings.SplitN(u, "\x1f", 3)
			if len(f) != 3 {
				return m, false
			}
			m.uses = append(m.uses, useMeta{id: f[0], name: f[1], cmd: clone(str(f[2]))})
		}
	}
	if parts[7] != "" {
		for _, r := range strings.Split(parts[7], "\x1d") {
			f := strings.Split(r, "\x1f")
			if len(f) != 3 {
				return m, false
			}
			chars, err := strconv.Atoi(f[1])
			if err != nil {
				return m, false
			}
			m.results = append(m.results, resultMeta{id: f[0], chars: chars, text: f[2] == "1"})
		}
	}
	return m, true
}

// metaSource yields a transcript's line facts in order; hint is about how
// many there are.
type metaSource struct {
	hint int
	each func(each func(m lineMeta) error) error
}

// factSource reads key's facts up to seq upTo from the covering index; a
// row without usable facts is parsed from its entry.
func (s *Store) factSource(ctx context.Context, key Key, upTo int64) metaSource {
	var hint int
	s.db.QueryRowContext(ctx, s.q(`SELECT count(*) FROM entries
		WHERE project_key = ? AND session_id = ? AND subpath = ? AND seq <= ?`),
		key.ProjectKey, key.SessionID, key.Subpath, upTo).Scan(&hint) // only a hint: an error just means no hint
	return metaSource{hint: hint, each: func(each func(lineMeta) error) error {
		rows, err := s.db.QueryContext(ctx, s.q(`SELECT seq, facts FROM entries
			WHERE project_key = ? AND session_id = ? AND subpath = ? AND seq <= ? ORDER BY seq`),
			key.ProjectKey, key.SessionID, key.Subpath, upTo)
		if err != nil {
			return err
		}
		defer rows.Close()
		var seq int64
		var facts sql.NullString
		for rows.Next() {
			if err := rows.Scan(&seq, &facts); err != nil {
				return err
			}
			m, ok := decodeFacts(facts.String)
			if !ok {
				var entry []byte
				if err := s.db.QueryRowContext(ctx, s.q("SELECT entry FROM entries WHERE seq = ?"), seq).Scan(&entry); err != nil {
					return err
				}
				m = parseLine(entry)
			}
			if err := each(m); err != nil {
				return err
			}
		}
		return rows.Err()
	}}
}
