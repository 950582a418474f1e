package sessionstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// ErrCorrupt: the SQLite file is damaged (SQLite said SQLITE_CORRUPT or
// SQLITE_NOTADB, or quick_check found a fault).
var ErrCorrupt = errors.New("session store is damaged")

// IsCorrupt reports whether err says the SQLite store is damaged.
func IsCorrupt(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrCorrupt) || sqliteCorrupt(err) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "database disk image is malformed") || strings.Contains(msg, "file is not a database")
}

// QuickCheck runs PRAGMA quick_check: nil for a sound file, else an error
// wrapping ErrCorrupt that says what SQLite found. PostgreSQL has nothing
// to check.
func (s *Store) QuickCheck(ctx context.Context) error {
	if s.pg {
		return nil
	}
	rows, err := s.db.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		if IsCorrupt(err) {
			return fmt.Errorf("sessionstore: %s: %w: %v", s.path, ErrCorrupt, err)
		}
		return fmt.Errorf("sessionstore: quick_check %s: %w", s.path, err)
	}
	defer rows.Close()
	var faults []string
	for rows.Next() {
		var line string
		if rows.Scan(&line) == nil && line != "ok" && len(faults) < 3 {
			faults = append(faults, line)
		}
	}
	if err := rows.Err(); err != nil && IsCorrupt(err) {
		faults = append(faults, err.Error())
	}
	if len(faults) > 0 {
		return fmt.Errorf("sessionstore: %s: %w: %s", s.path, ErrCorrupt, strings.Join(faults, "; "))
	}
	return nil
}

// MoveAside renames a damaged SQLite store, its -wal and -shm files with
// it, to <path>.corrupt-<time> (-wal, -shm after that) and returns the new
// name of the database file. Nothing is deleted: the damaged file stays
// for whoever wants to look at it.
func MoveAside(path string, now time.Time) (string, error) {
	aside := path + ".corrupt-" + now.UTC().Format("20060102T150405.000000000Z")
	if err := os.Rename(path, aside); err != nil {
		return "", fmt.Errorf("sessionstore: moving the damaged store aside: %w", err)
	}
	for _, ext := range []string{"-wal", "-shm"} {
		if err := os.Rename(path+ext, aside+ext); err != nil && !errors.Is(err, os.ErrNotExist) {
			return aside, fmt.Errorf("sessionstore: moving the damaged store's %s aside: %w", ext, err)
		}
	}
	return aside, nil
}
