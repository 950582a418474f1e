package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/mattn/go-runewidth"
)

// table lines up columns by display width, so a Chinese step name (two
// columns a character) does not push its row out of line as it does in
// text/tabwriter, which counts runes.
type table struct {
	rows [][]string
}

func (t *table) row(cells ...any) {
	r := make([]string, len(cells))
	for i, c := range cells {
		r[i] = fmt.Sprint(c)
	}
	t.rows = append(t.rows, r)
}

// write prints the rows, columns two spaces apart, the last one unpadded.
func (t *table) write(w io.Writer) error {
	var widths []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], runewidth.StringWidth(c))
		}
	}
	var sb strings.Builder
	for _, r := range t.rows {
		for i, c := range r {
			sb.WriteString(c)
			if i < len(r)-1 {
				sb.WriteString(strings.Repeat(" ", widths[i]-runewidth.StringWidth(c)+2))
			}
		}
		sb.WriteString("\n")
	}
	_, err := io.WriteString(w, trimLineEnds(sb.String()))
	return err
}

func trimLineEnds(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// plural is "1 turn", "2 turns", "0 turns"; irregular forms as "retry|retries".
func plural(n int, word string) string {
	one, many := word, word+"s"
	if i := strings.IndexByte(word, '|'); i >= 0 {
		one, many = word[:i], word[i+1:]
	}
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// clipWidth cuts s to at most n display columns, with "…" when cut.
func clipWidth(s string, n int) string {
	if runewidth.StringWidth(s) <= n {
		return s
	}
	return runewidth.Truncate(s, n, "…")
}
