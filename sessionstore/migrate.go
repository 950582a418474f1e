package sessionstore

import (
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"sort"
	"strconv"
	"time"
)

//go:embed migrations/*.sql migrations/postgres/*.sql
var migrations embed.FS

// migrate applies the embedded migrations past PRAGMA user_version, each in
// one transaction.
func migrate(db *sql.DB) error {
	// 16 KiB pages (only a new, empty file takes them): entries are kilobytes
	// each and a resume reads a session in one sweep, a third faster than
	// through 4 KiB pages; larger pages would multiply what every small
	// mirror append writes to the WAL. Then WAL, which is persistent and must
	// come after the page size.
	for _, pragma := range []string{"PRAGMA page_size = 16384", "PRAGMA journal_mode = WAL"} {
		if err := execBusy(db, pragma, busyTimeout); err != nil {
			return fmt.Errorf("migrate: %s: %w", pragma, err)
		}
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	sort.Strings(names)
	tx, err := db.Begin()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	var version int
	if err := tx.QueryRow("PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for i := version; i < len(names); i++ {
		sqlText, err := migrations.ReadFile(names[i])
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if _, err := tx.Exec(string(sqlText)); err != nil {
			return fmt.Errorf("migrate %s: %w", names[i], err)
		}
	}
	if version < len(names) {
		if _, err := tx.Exec(fmt.Sprintf("PRAGMA user_version = %d", len(names))); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// execBusy runs q, retrying while the database is busy or locked. SQLite
// does not call the busy handler for every lock it needs: switching a new
// file to WAL while other processes open it too answers "database is
// locked" at once (eight `flower step`s starting in one run dir did).
func execBusy(db *sql.DB, q string, patience time.Duration) error {
	deadline := time.Now().Add(patience)
	for {
		_, err := db.Exec(q)
		if err == nil || !busy(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(time.Duration(10+rand.IntN(40)) * time.Millisecond)
	}
}

// openReadOnly opens s's SQLite file read-only, unmigrated: an older
// schema is refused with the way to upgrade it.
func openReadOnly(s *Store) (*Store, error) {
	if _, err := os.Stat(s.path); err != nil {
		return nil, fmt.Errorf("sessionstore: open %s: %w", s.path, err)
	}
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(busyTimeout.Milliseconds(), 10))
	q.Set("mode", "ro")
	db, err := sql.Open("sqlite3", "file:"+s.path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sessionstore: open %s: %w", s.path, err)
	}
	names, _ := fs.Glob(migrations, "migrations/*.sql")
	var version int
	if err := db.QueryRow("PRAGMA user_version").Scan(&version); err != nil {
		db.Close()
		return nil, fmt.Errorf("sessionstore: open %s: %w", s.path, err)
	}
	if version < len(names) {
		db.Close()
		return nil, fmt.Errorf("sessionstore: %s has an older schema (%d < %d); a command that writes it (flower step, flower sessions import) upgrades it, reading ones never change it",
			s.path, version, len(names))
	}
	s.db = db
	return s, nil
}
