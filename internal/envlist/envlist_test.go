package envlist

import (
	"slices"
	"strings"
	"testing"
)

func TestEdits(t *testing.T) {
	env := []string{"A=1", "B=2", "A=3", "C=x=y", "BARE"}
	orig := slices.Clone(env)
	for _, tc := range []struct {
		name string
		got  []string
		want []string
	}{
		{"set replaces every earlier entry", Set(env, "A", "9"), []string{"B=2", "C=x=y", "BARE", "A=9"}},
		{"set adds a new name last", Set(env, "D", ""), []string{"A=1", "B=2", "A=3", "C=x=y", "BARE", "D="}},
		{"unset several", Unset(env, "A", "BARE"), []string{"B=2", "C=x=y"}},
		{"unset a name that is only a prefix", Unset(env, "C=x"), orig},
		{"without by prefix", Without(env, func(n string) bool { return strings.HasPrefix(n, "B") }), []string{"A=1", "A=3", "C=x=y"}},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, tc.got, tc.want)
		}
	}
	if !slices.Equal(env, orig) {
		t.Errorf("an edit changed its argument: %q", env)
	}
}

func TestGetter(t *testing.T) {
	get := Getter([]string{"A=1", "A=3", "C=x=y", "BARE", "E="})
	for k, want := range map[string]string{"A": "3", "C": "x=y", "BARE": "", "E": "", "Z": ""} {
		if got := get(k); got != want {
			t.Errorf("get(%q) = %q, want %q", k, got, want)
		}
	}
}
