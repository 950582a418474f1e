// Package envlist edits environments in the os/exec form, a []string of
// "NAME=value": the one copy of set, unset, filter and look-up that the
// harness, the scripted model's offline environment and the command share.
//
// Lifecycle: stateless; every function returns a new slice and leaves its
// argument untouched. A leaf: it imports nothing of this module.
package envlist

import (
	"slices"
	"strings"
)

// Name is the NAME of one "NAME=value" entry (all of kv when it has no "=").
func Name(kv string) string {
	name, _, _ := strings.Cut(kv, "=")
	return name
}

// Without returns env without the entries whose name drop reports.
func Without(env []string, drop func(name string) bool) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !drop(Name(kv)) {
			out = append(out, kv)
		}
	}
	return out
}

// Unset returns env without any entry named in names.
func Unset(env []string, names ...string) []string {
	return Without(env, func(n string) bool { return slices.Contains(names, n) })
}

// Set returns env with name=value as its last entry, replacing any earlier
// entry of that name.
func Set(env []string, name, value string) []string {
	return append(Unset(env, name), name+"="+value)
}

// Getter returns a look-up over env in the shape of os.Getenv: "" for a
// name it does not set; of repeated names the last wins, as for a child.
func Getter(env []string) func(string) string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return func(k string) string { return m[k] }
}
