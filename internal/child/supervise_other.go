//go:build !linux

package child

import (
	"errors"
)

// hasSubreaper: no child subreaper here, so the supervisor is portable.
const hasSubreaper = false

// becomeSubreaper is never called off Linux (supervisorMode refuses).
func becomeSubreaper() error { return errors.New("no child subreaper off Linux") }

// KillTree SIGKILLs every descendant of root (not root itself) that a ps
// listing shows, freezing the tree first (the portable tracker, without
// the groups of earlier listings), and reports how many it signalled.
func KillTree(root int) int {
	t, err := newTracker(root)
	if err != nil {
		return 0
	}
	return t.kill()
}

// Descendants lists the live (not zombie) processes whose chain of parents
// leads to root, root excluded, from one ps listing.
func Descendants(root int) []int {
	t, err := newTracker(root)
	if err != nil {
		return nil
	}
	rows, err := t.list()
	if err != nil {
		return nil
	}
	var out []int
	for _, r := range t.members(rows) {
		if !r.zombie {
			out = append(out, r.pid)
		}
	}
	return out
}
