package sessionstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// OpenURL opens the store a URL names: a path or sqlite://PATH is an SQLite
// file (as Open), postgres://… or postgresql://… a PostgreSQL database
// (Unix sockets: ?host=/socket/dir). Both backends give the same Store, with
// the same load pipeline. A PostgreSQL database gets its schema from the
// embedded migrations on first open; the database itself must exist.
// Errors name the URL with its password masked.
func OpenURL(ctx context.Context, rawURL string, opts ...Option) (*Store, error) {
	switch scheme := urlScheme(rawURL); scheme {
	case "":
		return Open(rawURL, opts...)
	case "sqlite":
		p := strings.TrimPrefix(rawURL[len(scheme)+1:], "//")
		if p == "" {
			return nil, fmt.Errorf("sessionstore: open %s: no file path after sqlite://", rawURL)
		}
		return Open(p, opts...)
	case "postgres", "postgresql":
		return openPostgres(ctx, rawURL, opts)
	default:
		return nil, fmt.Errorf("sessionstore: open %s: unknown store scheme %q (want a file path, sqlite://PATH or postgres://…)",
			MaskURL(rawURL), scheme)
	}
}

// urlScheme is the scheme of "scheme://…", or "" for a plain path.
func urlScheme(s string) string {
	i := strings.Index(s, "://")
	if i <= 0 {
		return ""
	}
	for _, r := range s[:i] {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.') {
			return ""
		}
	}
	return strings.ToLower(s[:i])
}

// MaskURL hides the password of a store URL (in the user info and in a
// password= query parameter), for messages and listings.
func MaskURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		if i := strings.Index(raw, "@"); urlScheme(raw) != "" && i > 0 {
			return raw[:strings.Index(raw, "://")+3] + "xxxxx" + raw[i:] // unparsable: hide all user info
		}
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// IdleTxParam and IdleTxTimeout: a transaction left idle this long is
// ended by the server (unless the URL sets the parameter), so that a
// writer paused mid-transaction (SIGSTOP, a frozen VM) holds no row lock
// — a queued flow's fence, say — that a takeover waits on forever. Every
// transaction here is a few statements with nothing between them.
const (
	IdleTxParam   = "idle_in_transaction_session_timeout"
	IdleTxTimeout = "10s"
)

// defaultConnectTimeout bounds the first connection when the URL sets no
// connect_timeout, so an unreachable server fails instead of hanging.
const defaultConnectTimeout = 10 * time.Second

func openPostgres(ctx context.Context, rawURL string, opts []Option) (*Store, error) {
	shown := MaskURL(rawURL)
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("sessionstore: open %s: not a valid PostgreSQL URL", shown)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = defaultConnectTimeout
	}
	if _, set := cfg.RuntimeParams[IdleTxParam]; !set {
		cfg.RuntimeParams[IdleTxParam] = IdleTxTimeout
	}
	db := stdlib.OpenDB(*cfg)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sessionstore: open %s: %s", shown, pgReason(err))
	}
	s := newStore(shown, opts)
	if !s.readOnly {
		if err := migratePostgres(ctx, db); err != nil {
			db.Close()
			return nil, fmt.Errorf("sessionstore: open %s: %w", shown, err)
		}
	}
	s.db, s.pg = db, true
	return s, nil
}

// pgReason shortens a connection error to its cause: pgconn's message names
// the user, host and database, then the server's or the socket's word.
func pgReason(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, "server error: "); i >= 0 {
		return strings.TrimPrefix(msg[i:], "server error: ")
	}
	return msg
}

// pgMigrateLock and pgAppendLock are advisory lock keys: the first
// serializes first opens racing to migrate, the second every write's clock.
const (
	pgMigrateLock = 0x666c6f776572_01 // "flower" 01
	pgAppendLock  = 0x666c6f776572_02
)

// migratePostgres applies the embedded migrations/postgres/*.sql past the
// version in sessionstore_schema, all in one transaction under an advisory
// lock (PostgreSQL's DDL is transactional, so a failed open leaves nothing).
func migratePostgres(ctx context.Context, db *sql.DB) error {
	names, err := fs.Glob(migrations, "migrations/postgres/*.sql")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	sort.Strings(names)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", int64(pgMigrateLock)); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS sessionstore_schema (version integer NOT NULL)"); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	var version int
	switch err := tx.QueryRowContext(ctx, "SELECT version FROM sessionstore_schema").Scan(&version); {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.ExecContext(ctx, "INSERT INTO sessionstore_schema (version) VALUES (0)"); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	case err != nil:
		return fmt.Errorf("migrate: %w", err)
	}
	if version > len(names) {
		return fmt.Errorf("migrate: the database has schema version %d, this flower knows %d (upgrade flower)", version, len(names))
	}
	for i := version; i < len(names); i++ {
		sqlText, err := migrations.ReadFile(names[i])
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if _, err := tx.ExecContext(ctx, string(sqlText)); err != nil {
			return fmt.Errorf("migrate %s: %w", names[i], err)
		}
	}
	if _, err := tx.ExecContext(ctx, "UPDATE sessionstore_schema SET version = $1", len(names)); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// pgNextMTime is nextMTime on PostgreSQL: the database's clock (so writers
// on machines with skewed clocks agree), above every stored mtime; the
// advisory lock, held to the end of the write transaction, serializes the
// writers so mtimes rise in commit order.
func pgNextMTime(ctx context.Context, tx *sql.Tx) (int64, error) {
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", int64(pgAppendLock)); err != nil {
		return 0, err
	}
	var t int64
	err := tx.QueryRowContext(ctx, `SELECT greatest(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint,
		coalesce(max(mtime), 0) + 1) FROM meta`).Scan(&t)
	return t, err
}

// rebind turns the ? placeholders of a query into PostgreSQL's $1, $2, …
// (the queries hold no other question marks).
func rebind(q string) string {
	var b strings.Builder
	n := 0
	for {
		i := strings.IndexByte(q, '?')
		if i < 0 {
			b.WriteString(q)
			return b.String()
		}
		n++
		b.WriteString(q[:i])
		b.WriteString("$" + strconv.Itoa(n))
		q = q[i+1:]
	}
}
