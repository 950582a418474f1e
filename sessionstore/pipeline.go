package sessionstore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/flowerhq/flower/glance"
	"github.com/flowerhq/flower/internal/textclip"
)

// LoadForResume loads key and runs the load pipeline on it: expire →
// trim → prune → repair. The stored rows are not changed; trimmed text is
// written to a spill file under the workspace. LastReport then says what
// each stage did. An unknown key fails with ErrNotFound.
func (s *Store) LoadForResume(ctx context.Context, key Key) ([]json.RawMessage, TrimReport, error) {
	return s.loadForResume(ctx, key, false)
}

// Preview is LoadForResume without side effects: the result and report are
// the same, and the pointers name the spill file a resume would write, but
// no file is written (for `flower sessions show --trimmed` and `report`).
// LastReport is not changed.
func (s *Store) Preview(ctx context.Context, key Key) ([]json.RawMessage, TrimReport, error) {
	return s.loadForResume(ctx, key, true)
}

func (s *Store) loadForResume(ctx context.Context, key Key, dryRun bool) ([]json.RawMessage, TrimReport, error) {
	if err := key.validate(); err != nil {
		return nil, TrimReport{}, fmt.Errorf("sessionstore: load for resume: %w", err)
	}
	upTo, err := s.lastSeq(ctx, key)
	if err != nil {
		return nil, TrimReport{}, fmt.Errorf("sessionstore: load for resume %s: %w", key, err)
	}
	if upTo == 0 {
		return nil, TrimReport{}, fmt.Errorf("sessionstore: load for resume: %s is not in %s: %w", key, s.path, ErrNotFound)
	}
	var out []json.RawMessage
	rep, err := s.pipeline(s.factSource(ctx, key, upTo), s.rowSource(ctx, key, upTo), func(e []byte) error {
		out = append(out, bytes.Clone(e))
		return nil
	}, dryRun)
	if err != nil {
		return nil, TrimReport{}, fmt.Errorf("sessionstore: load for resume %s: %w", key, err)
	}
	if !dryRun {
		s.setReport(rep)
	}
	return out, rep, nil
}

// LastReport is the report of the last LoadForResume or Materialize.
func (s *Store) LastReport() TrimReport {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.report
}

func (s *Store) setReport(r TrimReport) {
	s.mu.Lock()
	s.report = r
	s.mu.Unlock()
}

// plan is what the stages decided after the scan.
type plan struct {
	sc        *scanner
	expire    map[string]string // tool_use_id → replacement text
	trim      map[string]int    // tool_use_id → its length in chars, moving to the spill file
	dropBlock map[string]bool   // tool id whose tool_use and tool_result blocks go
	dropLine  map[int]bool
	newParent map[int]string
	after     map[int][]orphan // synthetic results to emit after a line
	sources   map[int][]byte   // raw of the lines that synthetic results copy from
	spill     *spillPack
	preview   int
	rep       TrimReport
}

type orphan struct {
	line int
	id   string
}

// pipeline runs the scan over metas, the stages, and render over src (the
// same lines); emit gets every output line, valid only during the call.
func (s *Store) pipeline(metas metaSource, src source, emit func([]byte) error, dryRun bool) (TrimReport, error) {
	sc := newScanner(metas.hint)
	rep := TrimReport{Transcripts: 1}
	if err := metas.each(func(m lineMeta) error {
		sc.add(m)
		rep.Entries++
		return nil
	}); err != nil {
		return rep, err
	}
	p := &plan{sc: sc, expire: map[string]string{}, trim: map[string]int{}, dropBlock: map[string]bool{},
		dropLine: map[int]bool{}, newParent: map[int]string{}, after: map[int][]orphan{}, sources: map[int][]byte{},
		preview: s.trim.PreviewChars, rep: rep}
	if s.ephemeral.Enabled {
		p.planExpire(s.ephemeral)
	}
	if s.trim.Enabled {
		if !filepath.IsLocal(s.trim.SpillDirname) {
			return rep, fmt.Errorf("trim: spill_dirname %q must be a relative path inside the workspace", s.trim.SpillDirname)
		}
		dir, err := filepath.Abs(filepath.Join(s.workspace, s.trim.SpillDirname))
		if err != nil {
			return rep, fmt.Errorf("trim: %w", err)
		}
		p.planTrim(s.trim, dir)
		if p.spill != nil {
			p.spill.reuse = p.spill.reuse || dryRun
		}
	}
	if s.prune.KeepDenials >= 0 {
		p.planPrune(s.prune.KeepDenials)
	}
	p.planRepair()
	if err := p.render(src, emit); err != nil {
		return p.rep, err
	}
	return p.rep, nil
}

// results calls f for every tool_result a content stage may change.
func (p *plan) results(f func(r resultMeta)) {
	for _, m := range p.sc.lines {
		if m.typ != "user" || m.compact {
			continue
		}
		for _, r := range m.results {
			if _, done := p.expire[r.id]; !done && p.trim[r.id] == 0 {
				f(r)
			}
		}
	}
}

// planExpire picks the old results of ephemeral Bash commands.
func (p *plan) planExpire(pol EphemeralPolicy) {
	memo := map[string]bool{}
	p.results(func(r resultMeta) {
		tu, ok := p.sc.toolUses[r.id]
		age := p.sc.age(r.id)
		if !ok || tu.name != "Bash" || age < pol.KeepRecent || !r.text || pol.MaxChars > 0 && r.chars > pol.MaxChars {
			return
		}
		eph, seen := memo[tu.cmd]
		if !seen {
			eph = glance.IsEphemeral(tu.cmd)
			memo[tu.cmd] = eph
		}
		if eph {
			p.expire[r.id] = strings.NewReplacer("{cmd}", tu.cmd, "{age}", strconv.Itoa(age)).Replace(pol.Text)
		}
	})
}

// planTrim picks the long results outside the last KeepRecent turns.
func (p *plan) planTrim(pol TrimPolicy, dir string) {
	var ids []string
	p.results(func(r resultMeta) {
		if p.sc.age(r.id) >= pol.KeepRecent && r.chars > pol.MinChars && r.chars > 0 {
			p.trim[r.id] = r.chars
			ids = append(ids, r.id)
		}
	})
	if len(ids) > 0 {
		p.spill = newSpillPack(dir, ids)
	}
}

// touches reports whether render must edit line i.
func (p *plan) touches(i int) bool {
	if _, ok := p.newParent[i]; ok {
		return true
	}
	m := &p.sc.lines[i]
	for _, r := range m.results {
		if _, ok := p.expire[r.id]; ok || p.trim[r.id] > 0 || p.dropBlock[r.id] {
			return true
		}
	}
	for _, u := range m.uses {
		if p.dropBlock[u.id] {
			return true
		}
	}
	return false
}

// render is pass 2: it reads the lines again and emits them, edited where
// the plan says so, with synthetic results inserted.
func (p *plan) render(src source, emit func([]byte) error) error {
	i := 0
	out := func(b []byte) error {
		p.rep.BytesOut += len(b)
		return emit(b)
	}
	err := src(func(raw []byte) error {
		p.rep.BytesIn += len(raw)
		if i >= len(p.sc.lines) {
			return fmt.Errorf("render: the transcript grew between passes")
		}
		if _, ok := p.sources[i]; ok {
			p.sources[i] = append([]byte(nil), raw...)
		}
		if !p.dropLine[i] {
			line := raw
			if p.touches(i) {
				var err error
				if line, err = p.edit(i, raw); err != nil {
					return err
				}
			}
			if err := out(line); err != nil {
				return err
			}
		}
		for _, o := range p.after[i] {
			if err := out(syntheticResult(p.sources[o.line], o.id)); err != nil {
				return err
			}
		}
		i++
		return nil
	})
	if err == nil && i != len(p.sc.lines) {
		err = fmt.Errorf("render: the transcript changed between passes (%d lines, then %d)", len(p.sc.lines), i)
	}
	if p.spill != nil {
		created, ferr := p.spill.finish(err == nil)
		if err == nil && ferr != nil {
			err = fmt.Errorf("trim: %w", ferr)
		}
		if created {
			p.rep.SpillFiles++
		}
	}
	return err
}

// editBlock is one content block of a line being edited.
type editBlock struct {
	raw  string
	drop bool
	sp   *splice // content edit, offsets in the line
}

// edit applies the plan to line i.
func (p *plan) edit(i int, raw []byte) ([]byte, error) {
	line := view(raw)
	sp, content := p.editParent(i, line)
	if !strings.HasPrefix(content, "[") {
		return applySplices(raw, sp), nil
	}
	var blocks []editBlock
	dropped := false
	var err error
	elements(content, func(b string) bool {
		var bk editBlock
		if bk, err = p.editContentBlock(&p.sc.lines[i], line, b); err != nil {
			return false
		}
		dropped = dropped || bk.drop
		blocks = append(blocks, bk)
		return true
	})
	if err != nil {
		return nil, err
	}
	if !dropped {
		for _, b := range blocks {
			if b.sp != nil {
				sp = append(sp, *b.sp)
			}
		}
		return applySplices(raw, sp), nil
	}
	return applySplices(raw, append(sp, rebuildContent(line, content, blocks))), nil
}

// editParent relinks line i's parentUuid when the plan says so, and finds
// its message content.
func (p *plan) editParent(i int, line string) (sp []splice, content string) {
	members(line, func(k, v string) bool {
		switch k {
		case "parentUuid":
			if np, ok := p.newParent[i]; ok {
				val := []byte("null")
				if np != "" {
					val, _ = json.Marshal(np)
				}
				at := offsetIn(line, v)
				sp = append(sp, splice{at, at + len(v), val})
			}
		case "message":
			content = member(v, "content")
		}
		return true
	})
	return sp, content
}

// editContentBlock decides one content block b of line (entry m): dropped,
// expired, trimmed into a spill file, or kept.
func (p *plan) editContentBlock(m *lineMeta, line, b string) (editBlock, error) {
	bk := editBlock{raw: b}
	var typ, id, body string
	members(b, func(k, v string) bool {
		switch k {
		case "type":
			typ = str(v)
		case "id", "tool_use_id":
			id = str(v)
		case "content":
			body = v
		}
		return true
	})
	if typ != "tool_use" && typ != "tool_result" {
		id = ""
	}
	exp, expired := p.expire[id]
	at := offsetIn(line, body)
	switch {
	case id != "" && p.dropBlock[id]:
		bk.drop = true
	case typ != "tool_result" || m.typ != "user" || m.compact || id == "":
	case expired:
		v, _ := json.Marshal(exp)
		bk.sp = &splice{at, at + len(body), v}
		p.rep.Expired++
		p.rep.ExpiredBytes += len(body)
	case p.trim[id] > 0:
		with, err := p.trimBody(id, body)
		if err != nil {
			return bk, err
		}
		bk.sp = &splice{at, at + len(body), with}
	}
	return bk, nil
}

// trimPointerFormat is what replaces a result trimmed on resume (its
// characters, the spill file, its lines from-to, offset and limit for
// Read): the model reads it, so it is Chinese like every model-facing text.
const trimPointerFormat = "[恢复会话时已截断: %d 字移到 %s 第 %d-%d 行,全文请用 Read 读取该文件(offset %d, limit %d)]"

// trimBody moves a tool result's body into the spill file and returns the
// pointer text that replaces it.
func (p *plan) trimBody(id, body string) ([]byte, error) {
	var file, head string
	var from, to int
	var err error
	if strings.HasPrefix(body, "\"") {
		file, from, to, err = p.spill.addJSON(id, body)
		head = str(body[:rawPrefix(body, p.preview)] + "\"")
	} else {
		text, _ := plainText(body)
		file, from, to, err = p.spill.add(id, text)
		head = text
	}
	if err != nil {
		return nil, fmt.Errorf("trim: %w", err)
	}
	pointer := fmt.Sprintf(trimPointerFormat, p.trim[id], file, from, to, from, to-from+1)
	if p.preview > 0 {
		pointer += "\n" + textclip.Runes(head, p.preview)
	}
	p.rep.Trimmed++
	p.rep.TrimmedBytes += len(body)
	return replaceText(body, pointer), nil
}

// rebuildContent is the splice that replaces line's content array with the
// blocks that stay.
func rebuildContent(line, content string, blocks []editBlock) splice {
	arr := []byte{'['}
	for _, b := range blocks {
		if b.drop {
			continue
		}
		if len(arr) > 1 {
			arr = append(arr, ',')
		}
		own := []byte(b.raw)
		if b.sp != nil {
			off := offsetIn(line, b.raw)
			own = applySplices(own, []splice{{b.sp.start - off, b.sp.end - off, b.sp.with}})
		}
		arr = append(arr, own...)
	}
	arr = append(arr, ']')
	at := offsetIn(line, content)
	return splice{at, at + len(content), arr}
}

// rawPrefix is how much of the JSON string literal raw (without its closing
// quote) holds at least n characters, cut at a character boundary and never
// inside an escape.
func rawPrefix(raw string, n int) int {
	i, chars := 1, 0
	for i < len(raw)-1 && chars < n {
		switch c := raw[i]; {
		case c == '\\' && i+1 < len(raw)-1 && raw[i+1] == 'u':
			i += 6
		case c == '\\':
			i += 2
		default:
			_, size := utf8.DecodeRuneInString(raw[i:])
			i += size
		}
		chars++
	}
	return min(i, len(raw)-1)
}

// offsetIn is where sub, a substring of s, starts in s.
func offsetIn(s, sub string) int {
	return int(uintptr(unsafe.Pointer(unsafe.StringData(sub))) - uintptr(unsafe.Pointer(unsafe.StringData(s))))
}

type splice struct {
	start, end int
	with       []byte
}

// applySplices returns raw with the (non-overlapping) splices applied.
func applySplices(raw []byte, sp []splice) []byte {
	if len(sp) == 0 {
		return raw
	}
	for i := 1; i < len(sp); i++ { // few splices: insertion sort
		for j := i; j > 0 && sp[j].start < sp[j-1].start; j-- {
			sp[j], sp[j-1] = sp[j-1], sp[j]
		}
	}
	size := len(raw)
	for _, s := range sp {
		size += len(s.with) - (s.end - s.start)
	}
	out := make([]byte, 0, size)
	pos := 0
	for _, s := range sp {
		out = append(out, raw[pos:s.start]...)
		out = append(out, s.with...)
		pos = s.end
	}
	return append(out, raw[pos:]...)
}

// plainText is a tool_result content's text (raw JSON): the string itself,
// or its text blocks joined. only is false when an image / document block
// is present.
func plainText(c string) (text string, only bool) {
	var b strings.Builder
	only = textParts(c, func(t string) { b.WriteString(str(t)) })
	return b.String(), only
}

// replaceText is content (raw JSON) with its text replaced: a string
// becomes text; in a block array the text blocks become one text block
// (where the first was) and every other block stays as it was.
func replaceText(c string, text string) []byte {
	if strings.HasPrefix(c, "\"") {
		b, _ := json.Marshal(text)
		return b
	}
	textBlock, _ := json.Marshal(map[string]string{"type": "text", "text": text})
	out := []byte{'['}
	placed := false
	elements(c, func(blk string) bool {
		part := []byte(blk)
		if str(member(blk, "type")) == "text" {
			if placed {
				return true
			}
			placed, part = true, textBlock
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, part...)
		return true
	})
	return append(out, ']')
}
