//go:build cgo

package sessionstore

import (
	"errors"

	"github.com/mattn/go-sqlite3"
)

// busy reports whether err is SQLite's "database is busy" or "locked".
func busy(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked)
}

// sqliteCorrupt reports whether err is SQLite's SQLITE_CORRUPT or
// SQLITE_NOTADB.
func sqliteCorrupt(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrCorrupt || se.Code == sqlite3.ErrNotADB)
}
