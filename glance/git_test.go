package glance

import "testing"

// TestGitCOnlyToTheWorkspaceItself: git -C takes "." in any spelling
// without "..": the kernel resolves x/.. through x, and a symlink x leads
// to another repository (its config runs programs). Control: the plain
// spellings of "." stay glances.
func TestGitCOnlyToTheWorkspaceItself(t *testing.T) {
	for _, cmd := range []string{"git -C x/.. status", "git -C ./sub/.. log -1", "git -C link/../ diff --stat", "git -C ./x/./.. status"} {
		if IsEphemeral(cmd) {
			t.Errorf("%q is a glance; a symlink x makes it another repository", cmd)
		}
	}
	for _, cmd := range []string{"git -C . status", "git -C ./ log -1", "git -C .// status"} {
		if !IsEphemeral(cmd) {
			t.Errorf("control: %q is no glance", cmd)
		}
	}
}
