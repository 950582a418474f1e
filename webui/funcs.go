package webui

import (
	"github.com/yuin/goldmark"
	"html/template"
	"strconv"
	"strings"
	"time"
)

// funcs are the templates' helpers; each returns plain text that the
// template escapes.
var funcs = template.FuncMap{
	"usd":     usd,
	"dur":     dur,
	"when":    when,
	"short":   func(s string) string { return firstLine(s) },
	"tokens":  tokens,
	"dash":    func(s string) string { return cmpOr(s, "-") },
	"class":   func(s string) string { return strings.ReplaceAll(s, " ", "-") },
	"hash":    func(s string) string { return s[:min(12, len(s))] },
	"pathesc": func(s string) string { return strings.ReplaceAll(template.URLQueryEscaper(s), "+", "%20") },
	"md":      markdown,
}

// markdown renders a document (the brief, the goal, the Q&A log, a handoff
// note) as HTML with goldmark's safe defaults: raw HTML in the text is
// left out and dangerous link targets (javascript:) are not rendered, so
// a document holding markup stays inert. Text goldmark cannot render is
// shown escaped.
func markdown(text string) template.HTML {
	var b strings.Builder
	if err := goldmark.Convert([]byte(text), &b); err != nil {
		return template.HTML("<pre>" + template.HTMLEscapeString(text) + "</pre>")
	}
	return template.HTML(b.String())
}

func usd(f float64) string { return "$" + strconv.FormatFloat(f, 'f', 4, 64) }

func dur(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return d.String()
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format(time.DateTime)
}

func cmpOr(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }
