//go:build !cgo

package sessionstore

// busy reports whether err is SQLite's "database is busy" or "locked".
// Without cgo go-sqlite3 has no driver (sql.Open answers that it needs
// cgo), so no error is ever SQLite's: this variant exists so that the
// packages vet and the static flower-hook builds on every platform.
func busy(error) bool { return false }

// sqliteCorrupt is false without cgo, for the same reason (the message
// check in IsCorrupt still applies).
func sqliteCorrupt(error) bool { return false }
