package harness

import (
	"bufio"
	"fmt"
	"os"
	"sync"
	"unicode/utf8"

	"github.com/flowerhq/flower/internal/textclip"
)

// keepRaw is how many raw bytes of a JSON string a big stream line keeps in
// the line the machine reads (its skeleton); the rest of a longer string
// goes to the spool (or nowhere), and the skeleton's string ends with
// textclip.Ellipsis. It is under maxEventText, so the skeleton's texts are
// already what an event keeps.
const keepRaw = maxEventText - 64

// bigString is one JSON string of a big line that was cut in its skeleton.
type bigString struct {
	open  int   // skeleton offset of its opening quote
	cut   int   // skeleton offset where the kept raw bytes end (the ellipsis starts)
	off   int64 // spool offset of the rest of its raw bytes; -1: not kept
	n     int64 // raw bytes of the rest
	bytes int   // decoded length of the whole string
}

// cutLine is what a stream line of bigLine bytes or more became: the
// skeleton the machine reads (every string over keepRaw cut) and where the
// cut strings' rest went. Only a result's or a transcript_mirror's strings
// (or a line whose type comes after them) are spooled: those are needed
// whole (the step's text, the session store); the rest is counted only.
type cutLine struct {
	skel  []byte // the skeleton (the line the machine reads)
	spool *spool
	strs  []bigString
}

// at is the cut string whose opening quote is at skeleton offset open.
func (b *cutLine) at(open int) (bigString, bool) {
	if b == nil {
		return bigString{}, false
	}
	for _, s := range b.strs {
		if s.open == open {
			return s, true
		}
	}
	return bigString{}, false
}

// text is the whole decoded string whose opening quote is at skeleton
// offset open (ok false: not a spooled string of this line). It costs one
// buffer of the string's raw size, decoded in place.
func (b *cutLine) text(open int) (string, bool, error) {
	s, ok := b.at(open)
	if !ok || s.off < 0 {
		return "", false, nil
	}
	kept := b.skel[open+1 : s.cut]
	buf := make([]byte, len(kept)+int(s.n))
	copy(buf, kept)
	if _, err := b.spool.f.ReadAt(buf[len(kept):], s.off); err != nil {
		return "", true, fmt.Errorf("harness: reading a spooled stream text: %w", err)
	}
	return unsafeString(unescapeInPlace(buf)), true, nil
}

// whole is the line as claude printed it: the skeleton with every spooled
// string's rest put back (one buffer of the line's size).
func (b *cutLine) whole() ([]byte, error) {
	skeleton := b.skel
	n := len(skeleton)
	for _, s := range b.strs {
		if s.off < 0 {
			return nil, fmt.Errorf("harness: a big stream line was not kept whole")
		}
		n += int(s.n) - len(textclip.Ellipsis)
	}
	out := make([]byte, 0, n)
	at := 0
	for _, s := range b.strs {
		out = append(out, skeleton[at:s.cut]...)
		l := len(out)
		out = out[:l+int(s.n)]
		if _, err := b.spool.f.ReadAt(out[l:], s.off); err != nil {
			return nil, fmt.Errorf("harness: reading a spooled stream line: %w", err)
		}
		at = s.cut + len(textclip.Ellipsis)
	}
	return append(out, skeleton[at:]...), nil
}

// spool is the private file of one attempt where the rest of big strings
// goes as it arrives; made on first use in dir, removed by remove.
type spool struct {
	dir string
	mu  sync.Mutex
	f   *os.File
	w   *bufio.Writer
	end int64
	err error
}

// file opens the spool on first use.
func (s *spool) file() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil && s.err == nil {
		s.f, s.err = os.CreateTemp(s.dir, ".spool-*")
		if s.err == nil {
			s.w = bufio.NewWriterSize(s.f, 256<<10)
		}
	}
	return s.err
}

// write appends p to the spool (file must have succeeded).
func (s *spool) write(p []byte) error {
	n, err := s.w.Write(p)
	s.end += int64(n)
	return err
}

// flush makes what was written readable with ReadAt.
func (s *spool) flush() error {
	if s.w == nil {
		return nil
	}
	return s.w.Flush()
}

// remove closes and deletes the spool file, if there is one.
func (s *spool) remove() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f != nil {
		s.f.Close()
		os.Remove(s.f.Name())
		s.f = nil
	}
}

// skeletonizer turns a big stream line, fed in pieces as they are read,
// into its skeleton: a streaming scan of the JSON (strings, escapes,
// nesting and the top object's "type") that copies everything but the
// rest of each string over keepRaw, which goes to the spool or is only
// counted. It never holds more than the skeleton.
type skeletonizer struct {
	out   []byte
	big   cutLine
	sp    *spool
	depth int
	key   bool   // at depth 1, the next string is a key
	last  string // the last key at depth 1
	typ   string // the top object's "type", once seen

	inStr   bool
	start   int  // skeleton offset of the current string's opening quote
	esc     int  // bytes still to come of an escape (0: none; -1: after '\')
	escAt   int  // skeleton offset of the current escape's '\' (while not cut)
	hex     rune // a \u escape's value so far
	dec     int  // decoded bytes of the current string
	cutting bool // the current string is past keepRaw
	keep    bool // its rest goes to the spool
	cur     *bigString
	buf     []byte // the rest of the current cut string, before it is written
	err     error
}

// spooled reports whether a cut string of a line of type typ ("" not yet
// known) must be kept: the step's text, or what the session store needs.
func spooled(typ string) bool { return typ == "" || typ == "result" || typ == "transcript_mirror" }

// feed scans p, the next bytes of the line (without its newline).
func (k *skeletonizer) feed(p []byte) {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !k.inStr {
			k.structural(c)
			continue
		}
		k.stringByte(c)
	}
	k.drain()
}

// structural takes a byte outside strings.
func (k *skeletonizer) structural(c byte) {
	k.out = append(k.out, c)
	switch c {
	case '"':
		k.inStr, k.start, k.esc, k.dec, k.cutting = true, len(k.out)-1, 0, 0, false
	case '{', '[':
		k.depth++
		k.key = k.depth == 1 && c == '{'
	case '}', ']':
		k.depth--
	case ',':
		k.key = k.depth == 1
	case ':':
		k.key = false
	}
}

// stringByte takes a byte inside a string.
func (k *skeletonizer) stringByte(c byte) {
	closing := false
	switch {
	case k.esc == -1: // the byte after '\'
		if c == 'u' {
			k.esc, k.hex = 4, 0
		} else {
			k.esc, k.dec = 0, k.dec+1
		}
	case k.esc > 0:
		k.hex = k.hex<<4 | rune(unhex(c))
		if k.esc--; k.esc == 0 {
			k.dec += escLen(k.hex)
		}
	case c == '\\':
		k.esc = -1
		if !k.cutting {
			k.escAt = len(k.out)
		}
	case c == '"':
		closing = true
	default:
		k.dec++
	}
	if closing {
		k.endString()
		return
	}
	if k.cutting {
		if k.keep {
			k.buf = append(k.buf, c)
		}
		k.cur.n++
		return
	}
	k.out = append(k.out, c)
	if len(k.out)-k.start-1 >= keepRaw {
		k.startCut()
	}
}

// startCut makes the current string a cut one: what it kept so far ends
// at a whole escape and a whole UTF-8 character; the rest goes on.
func (k *skeletonizer) startCut() {
	cut := len(k.out)
	if k.esc != 0 {
		cut = k.escAt
	}
	i := cut - 1
	for i > k.start+1 && k.out[i]&0xC0 == 0x80 && cut-i < utf8.UTFMax {
		i--
	}
	if k.out[i] >= 0x80 && !utf8.FullRune(k.out[i:cut]) {
		cut = i
	}
	k.cutting = true
	k.keep = spooled(k.typ)
	k.big.strs = append(k.big.strs, bigString{open: k.start, cut: cut, off: -1})
	k.cur = &k.big.strs[len(k.big.strs)-1]
	if k.keep {
		if k.err = k.sp.file(); k.err != nil {
			k.keep = false
		} else {
			k.cur.off = k.sp.end
		}
	}
	rest := k.out[cut:]
	if k.keep {
		k.buf = append(k.buf, rest...)
	}
	k.cur.n = int64(len(rest))
	k.out = k.out[:cut]
}

// endString closes the current string.
func (k *skeletonizer) endString() {
	k.inStr = false
	if k.cutting {
		k.drain()
		k.cur.bytes = k.dec
		k.out = append(append(k.out, textclip.Ellipsis...), '"')
		k.cur = nil
		return
	}
	k.out = append(k.out, '"')
	if k.depth != 1 {
		return
	}
	raw := k.out[k.start+1 : len(k.out)-1]
	if len(raw) > 64 {
		return
	}
	s := string(raw)
	if k.key {
		k.last = s
	} else if k.last == "type" && k.typ == "" {
		k.typ = s
	}
}

// drain writes the current cut string's pending rest to the spool.
func (k *skeletonizer) drain() {
	if len(k.buf) == 0 {
		return
	}
	if k.err == nil {
		k.err = k.sp.write(k.buf)
	}
	k.buf = k.buf[:0]
}

// finish is the skeleton and, when a string was cut, where its rest went.
func (k *skeletonizer) finish() ([]byte, *cutLine, error) {
	k.drain()
	if k.err == nil {
		k.err = k.sp.flush()
	}
	if k.err != nil {
		return nil, nil, k.err
	}
	if len(k.big.strs) == 0 {
		return k.out, nil, nil
	}
	k.big.spool, k.big.skel = k.sp, k.out
	return k.out, &k.big, nil
}

// unhex is the value of a hex digit (0 for anything else).
func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10
	}
	return 0
}

// escLen is the decoded length of a \u escape of r: a surrogate counts 2
// (a pair decodes to 4 bytes).
func escLen(r rune) int {
	if r >= 0xD800 && r <= 0xDFFF {
		return 2
	}
	return utf8.RuneLen(r)
}

// unescapeInPlace decodes the raw bytes of a JSON string (without its
// quotes) in place, as encoding/json does (an unpaired surrogate is
// U+FFFD), and returns the decoded prefix of b: no escape is shorter than
// what it decodes to, so the writes never overtake the reads.
func unescapeInPlace(b []byte) []byte {
	w := 0
	for r := 0; r < len(b); {
		c := b[r]
		if c != '\\' || r+1 >= len(b) {
			b[w] = c
			w, r = w+1, r+1
			continue
		}
		switch e := b[r+1]; e {
		case 'u':
			cp, n := readU(b[r:])
			w += utf8.EncodeRune(b[w:], cp)
			r += n
		default:
			b[w] = simpleEscape(e)
			w, r = w+1, r+2
		}
	}
	return b[:w]
}

// readU decodes the \u escape at the start of b (with its low surrogate,
// when it is a pair): the rune and the raw bytes it took.
func readU(b []byte) (rune, int) {
	u := func(p []byte) (rune, bool) {
		if len(p) < 6 || p[0] != '\\' || p[1] != 'u' {
			return 0, false
		}
		var r rune
		for _, c := range p[2:6] {
			r = r<<4 | rune(unhex(c))
		}
		return r, true
	}
	r, ok := u(b)
	if !ok {
		return utf8.RuneError, min(len(b), 2)
	}
	if r >= 0xD800 && r < 0xDC00 {
		if lo, ok := u(b[6:]); ok && lo >= 0xDC00 && lo <= 0xDFFF {
			return (r-0xD800)<<10 | (lo - 0xDC00) + 0x10000, 12
		}
		return utf8.RuneError, 6
	}
	if r >= 0xDC00 && r <= 0xDFFF {
		return utf8.RuneError, 6
	}
	return r, 6
}

// simpleEscape is what \e decodes to (\" \\ \/ and the control letters).
func simpleEscape(e byte) byte {
	switch e {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return e
}
