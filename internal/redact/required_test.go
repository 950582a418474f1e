package redact

import (
	"strings"
	"testing"

	"github.com/flowerhq/flower/testkit/fakesecrets"
)

// TestNeedsSound: no rule's needs turn away a text its pattern matches —
// every sample secret, in every context, as the rules see it (escapes
// blanked), and ordinary text around a near miss.
func TestNeedsSound(t *testing.T) {
	set := rules()
	checked := 0
	for _, s := range fakesecrets.Samples() {
		for _, c := range contexts {
			view := blankEscapes([]byte(c.wrap(s.Text)))
			active, _ := set.active(view)
			for _, i := range active {
				ru := set.rules[i]
				if len(ru.matches(view, [][2]int{{0, len(view)}})) > 0 {
					checked++
					if !ru.mayMatch(view) {
						t.Errorf("%s in %s: rule %s matches, but its needs %v say it cannot", s.Name, c.name, ru.def.ID, ru.needs)
					}
				}
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d matches checked: the samples no longer exercise the rules", checked)
	}
}

// TestNeedsTable: what needsOf reads from patterns; and control, the rules
// that cost most on ordinary prose have needs that turn it away.
func TestNeedsTable(t *testing.T) {
	for _, tc := range []struct {
		pattern, yes, no string
	}{
		{`curl\b(?:.*?)[ \t](?:-H|--header)=x`, "curl a --header=x", "curl a -h=x"},
		{`(?i:key)[\s=]{0,3}([a-zA-Z0-9]{40})`, "key " + strings.Repeat("a", 40), "key " + strings.Repeat("a", 39) + "-"},
		{`(?i)secret`, "SECRET", "SECRET"}, // case-folded: no need
		{`(?:ab|cd)(?:ef|gh)`, "xxcdef", "abxef"},
		{`a+b`, "ab", "a"},
		{`(?:x)?abc`, "abc", "ab"},
	} {
		needs := needsOf(tc.pattern)
		met := func(s string) bool {
			for _, n := range needs {
				if !n.met([]byte(s)) {
					return false
				}
			}
			return true
		}
		if !met(tc.yes) {
			t.Errorf("%s: needs %v turn away %q", tc.pattern, needs, tc.yes)
		}
		if tc.no != tc.yes && met(tc.no) {
			t.Errorf("%s: needs %v let %q through", tc.pattern, needs, tc.no)
		}
	}
	prose := blankEscapes([]byte("A coherent answer: run curl https://example.com and read it.\\n" + strings.Repeat("words ", 50)))
	for _, id := range []string{"cohere-api-token", "curl-auth-header", "curl-auth-user"} {
		for _, ru := range rules().rules {
			if ru.def.ID == id && ru.mayMatch(prose) {
				t.Errorf("rule %s would run on prose that cannot match it (needs %v)", id, ru.needs)
			}
		}
	}
}
