//go:build !linux

package child

import "fmt"
import "io"

// Supervise needs Linux (a child subreaper); elsewhere Supervised runs the
// command directly and this main refuses.
func Supervise(args []string, stderr io.Writer) int {
	fmt.Fprintln(stderr, "flower-hook "+SuperviseArg+": needs Linux")
	return 2
}

// KillTree is Linux-only (it reads /proc); elsewhere the group signal is
// all there is.
func KillTree(root int) int { return 0 }

// supervised reports whether Supervised wraps the command in a supervisor.
const supervised = false

// Descendants needs /proc; elsewhere it knows of none.
func Descendants(root int) []int { return nil }
