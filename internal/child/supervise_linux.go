package child

import (
	"fmt"
	"syscall"
)

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER.
const prSetChildSubreaper = 36

// hasSubreaper: Linux has child subreapers, the supervisor's default mode.
const hasSubreaper = true

// becomeSubreaper makes the supervisor the child subreaper of everything
// it starts: an orphan of the tree is reparented to it, not to init.
func becomeSubreaper() error {
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		return fmt.Errorf("PR_SET_CHILD_SUBREAPER: %v", e)
	}
	return nil
}
