package sessionstore

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/flowerhq/flower/hooks"
	"github.com/tidwall/gjson"
)

// LoadForResume loads key and runs the load pipeline on it: expire →
// trim → prune → repair. The stored rows are not changed; trimmed text is
// written to a spill file under the workspace. LastReport then says what
// each stage did. An unknown key fails with ErrNotFound.
func (s *Store) LoadForResume(ctx context.Context, key Key) ([]json.RawMessage, TrimReport, error) {
	entries, err := s.Load(ctx, key)
	if err != nil {
		return nil, TrimReport{}, err
	}
	if entries == nil {
		return nil, TrimReport{}, fmt.Errorf("sessionstore: load for resume: %s is not in %s: %w", key, s.path, ErrNotFound)
	}
	out := make([]json.RawMessage, 0, len(entries))
	rep, err := s.pipeline(sliceSource(entries), func(e []byte) error {
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, TrimReport{}, fmt.Errorf("sessionstore: load for resume %s: %w", key, err)
	}
	s.setReport(rep)
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
	trim      map[string]bool   // tool_use_id → moves to the spill file
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

// pipeline runs scan, the stages, and render; emit gets every output line
// (valid only during the call when src streams).
func (s *Store) pipeline(src source, emit func([]byte) error) (TrimReport, error) {
	sc := newScanner()
	rep := TrimReport{Transcripts: 1}
	if err := src(func(raw []byte) error {
		sc.scan(raw)
		rep.Entries++
		rep.BytesIn += len(raw)
		return nil
	}); err != nil {
		return rep, err
	}
	p := &plan{sc: sc, expire: map[string]string{}, trim: map[string]bool{}, dropBlock: map[string]bool{},
		dropLine: map[int]bool{}, newParent: map[int]string{}, after: map[int][]orphan{}, sources: map[int][]byte{},
		preview: s.trim.PreviewChars, rep: rep}
	if s.ephemeral.Enabled {
		p.planExpire(s.ephemeral)
	}
	if s.trim.Enabled {
		dir, err := filepath.Abs(filepath.Join(s.workspace, s.trim.SpillDirname))
		if err != nil {
			return rep, fmt.Errorf("trim: %w", err)
		}
		p.planTrim(s.trim, dir)
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
			if _, done := p.expire[r.id]; !done && !p.trim[r.id] {
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
			eph = hooks.IsEphemeral(tu.cmd)
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
		if p.sc.age(r.id) >= pol.KeepRecent && r.chars > pol.MinChars {
			p.trim[r.id] = true
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
		if _, ok := p.expire[r.id]; ok || p.trim[r.id] || p.dropBlock[r.id] {
			return true
		}
	}
	for _, id := range m.uses {
		if p.dropBlock[id] {
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

// edit applies the plan to line i.
func (p *plan) edit(i int, raw []byte) ([]byte, error) {
	m := &p.sc.lines[i]
	r := gjson.Parse(view(raw))
	var sp []splice
	if np, ok := p.newParent[i]; ok {
		if par := r.Get("parentUuid"); par.Exists() {
			v := []byte("null")
			if np != "" {
				v, _ = json.Marshal(np)
			}
			sp = append(sp, splice{par.Index, par.Index + len(par.Raw), v})
		}
	}
	content := r.Get("message.content")
	if !content.IsArray() {
		return applySplices(raw, sp), nil
	}
	type blk struct {
		r    gjson.Result
		drop bool
		sp   *splice // content edit, absolute offsets
	}
	var blocks []blk
	dropped := false
	var err error
	content.ForEach(func(_, b gjson.Result) bool {
		bk := blk{r: b}
		var id string
		switch b.Get("type").Str {
		case "tool_use":
			id = b.Get("id").Str
		case "tool_result":
			id = b.Get("tool_use_id").Str
		}
		exp, expired := p.expire[id]
		switch {
		case id != "" && p.dropBlock[id]:
			bk.drop, dropped = true, true
		case m.typ != "user" || m.compact || id == "":
		case expired:
			c := b.Get("content")
			v, _ := json.Marshal(exp)
			bk.sp = &splice{c.Index, c.Index + len(c.Raw), v}
			p.rep.Expired++
			p.rep.ExpiredBytes += len(c.Raw)
		case p.trim[id]:
			c := b.Get("content")
			text, _ := plainText(c)
			file, from, to, werr := p.spill.add(id, text)
			if werr != nil {
				err = fmt.Errorf("trim: %w", werr)
				return false
			}
			pointer := fmt.Sprintf("[trimmed on resume: %d chars moved to %s lines %d-%d — Read that file (offset %d, limit %d) for the full text]",
				utf8.RuneCountInString(text), file, from, to, from, to-from+1)
			if p.preview > 0 {
				pointer += "\n" + clipRunes(text, p.preview)
			}
			bk.sp = &splice{c.Index, c.Index + len(c.Raw), replaceText(c, pointer)}
			p.rep.Trimmed++
			p.rep.TrimmedBytes += len(c.Raw)
		}
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
	// Rebuild the content array from the blocks that stay.
	arr := []byte{'['}
	for _, b := range blocks {
		if b.drop {
			continue
		}
		if len(arr) > 1 {
			arr = append(arr, ',')
		}
		own := raw[b.r.Index : b.r.Index+len(b.r.Raw)]
		if b.sp != nil {
			own = applySplices(own, []splice{{b.sp.start - b.r.Index, b.sp.end - b.r.Index, b.sp.with}})
		}
		arr = append(arr, own...)
	}
	arr = append(arr, ']')
	sp = append(sp, splice{content.Index, content.Index + len(content.Raw), arr})
	return applySplices(raw, sp), nil
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

// plainText is a tool_result content's text: the string itself, or its text
// blocks joined. only is false when an image / document block is present.
func plainText(c gjson.Result) (text string, only bool) {
	if c.Type == gjson.String {
		return c.Str, true
	}
	if !c.IsArray() {
		return "", false
	}
	var b strings.Builder
	only = true
	c.ForEach(func(_, blk gjson.Result) bool {
		if blk.Get("type").Str == "text" {
			b.WriteString(blk.Get("text").Str)
		} else {
			only = false
		}
		return true
	})
	return b.String(), only
}

// replaceText is content with its text replaced: a string becomes text; in a
// block array the text blocks become one text block (where the first was)
// and every other block stays as it was.
func replaceText(c gjson.Result, text string) []byte {
	if c.Type == gjson.String {
		b, _ := json.Marshal(text)
		return b
	}
	textBlock, _ := json.Marshal(map[string]string{"type": "text", "text": text})
	out := []byte{'['}
	placed := false
	c.ForEach(func(_, blk gjson.Result) bool {
		part := []byte(blk.Raw)
		if blk.Get("type").Str == "text" {
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
