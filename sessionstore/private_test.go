package sessionstore

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// The database and its WAL and SHM files are 0600 even under a umask that
// allows group and other reads (the control: a plain file made next to them
// under the same umask is 0644).
func TestStoreFilesPrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "control"), nil, 0o644)
	path := filepath.Join(dir, "sessions.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.db.Exec(`CREATE TABLE IF NOT EXISTS private_probe (x)`); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(filepath.Join(dir, "control")); st.Mode().Perm() != 0o644 {
		t.Fatalf("control file is %o: the umask did not apply", st.Mode().Perm())
	}
	seen := 0
	for _, suffix := range []string{"", "-wal", "-shm"} {
		st, err := os.Stat(path + suffix)
		if err != nil {
			continue
		}
		seen++
		if st.Mode().Perm() != 0o600 {
			t.Errorf("sessions.db%s is %o", suffix, st.Mode().Perm())
		}
	}
	if seen < 2 {
		t.Fatalf("only %d of the store's files exist: WAL not on?", seen)
	}
}
