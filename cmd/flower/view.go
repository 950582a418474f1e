package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/mattn/go-runewidth"
	"golang.org/x/term"

	"github.com/flowerhq/flower/internal/redact"
)

// view is how a run is shown. JSON lines only when asked (--json or
// FLOWER_JSON=1); otherwise the human view, which is the same whether
// stdout is a terminal or a pipe (as in gh): only at a terminal is the
// status line redrawn in place and clipped to the width, and only there is
// there colour (never with NO_COLOR). TERM=dumb means ASCII glyphs and no
// redraws. FLOWER_FORCE_TTY=N lays a piped view out for N columns.
type view struct {
	json, quiet bool
	live        bool // redraw the status line in place
	color       bool
	ascii       bool
	width       func() int // columns now; 0: no limit
}

func newView(e *cmdEnv, jsonOut, quiet bool) view {
	tty := e.IsTTY(e.Stdout)
	dumb := e.Getenv("TERM") == "dumb"
	v := view{json: jsonOut, quiet: quiet, ascii: dumb, live: tty && !dumb}
	v.color = v.live && e.Getenv("NO_COLOR") == ""
	forced, _ := strconv.Atoi(e.Getenv("FLOWER_FORCE_TTY"))
	v.width = func() int {
		if tty {
			if n := streamWidth(e.Stdout); n > 0 {
				return n
			}
		}
		if forced > 1 {
			return forced
		}
		if tty {
			return 80
		}
		return 0
	}
	return v
}

// streamWidth is the column count of the terminal behind v (or behind the
// redact.Writer that wraps it), 0 if none.
func streamWidth(v any) int {
	if w, ok := v.(io.Writer); ok {
		v = redact.Underlying(w)
	}
	f, ok := v.(*os.File)
	if !ok {
		return 0
	}
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return w
}

// asciiGlyphs are the view's non-ASCII marks in ASCII, for TERM=dumb.
var asciiGlyphs = strings.NewReplacer("✓", "ok", "✗", "x", "○", "-", "·", "-", "→", "->", "—", "-", "…", "...", "✉", "mail:", "⚠", "!")

// line is s as the view prints one line of it: ASCII for a dumb terminal,
// clipped to the width (less room, e.g. 1 for the live line, whose cursor
// must not reach the last column).
func (v view) line(s string, room int) string {
	if v.ascii {
		s = asciiGlyphs.Replace(s)
	}
	if w := v.width(); w > 0 {
		tail := "…"
		if v.ascii {
			tail = "..."
		}
		if runewidth.StringWidth(s) > w-room {
			s = runewidth.Truncate(s, w-room, tail)
		}
	}
	return s
}

// wrap breaks s into lines that fit the width, at spaces (a word wider
// than the width is clipped), continuation lines indented by two: for text
// a person must read whole, a question or a warning.
func (v view) wrap(s string) []string {
	w := v.width()
	if v.ascii {
		s = asciiGlyphs.Replace(s)
	}
	if w <= 4 || runewidth.StringWidth(s) <= w {
		return []string{s}
	}
	var out []string
	line := ""
	for _, word := range strings.Split(s, " ") {
		switch {
		case line == "":
			line = word
		case runewidth.StringWidth(line+" "+word) <= w:
			line += " " + word
		default:
			out = append(out, v.line(line, 0))
			line = "  " + word
		}
	}
	return append(out, v.line(line, 0))
}

// print writes s line by line, each fitted to the view.
func (v view) print(w io.Writer, s string) {
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		fmt.Fprintln(w, v.line(l, 0))
	}
}

// markColor colours a line's leading mark (✓ green, ✗ red, ○ yellow) when
// the view has colour.
func (v view) markColor(s string) string {
	if !v.color {
		return s
	}
	for mark, code := range map[string]string{"✓": "32", "✗": "31", "○": "33"} {
		if strings.HasPrefix(s, mark) {
			return "\033[" + code + "m" + mark + "\033[0m" + s[len(mark):]
		}
	}
	return s
}
