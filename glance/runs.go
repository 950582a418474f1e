package glance

import (
	"path"

	"mvdan.cc/sh/v3/syntax"
)

// RunsGit reports whether cmd is a glance (IsEphemeral) in which some
// simple command runs git, its words expanded as bash expands them (g""it
// and /usr/bin/git are git too). The hooks refuse such a glance in a
// repository whose own config names programs git would run.
func RunsGit(cmd string) bool {
	found := false
	ok := classify(cmd, func(_ *syntax.CallExpr, _ bindings, argv []arg) {
		if len(argv) > 0 && path.Base(argv[0].v) == "git" {
			found = true
		}
	})
	return ok && found
}
