package sessionstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/flowerhq/flower/internal/redact"
	_ "github.com/mattn/go-sqlite3" // the database/sql driver "sqlite3"
	"github.com/tidwall/gjson"
)

// Key names one transcript: the CLI's project folder name, the session id,
// and for a subagent transcript its path under the session
// ("subagents/agent-<id>"); Subpath is empty for the main transcript.
type Key struct {
	ProjectKey string `json:"project_key"`
	SessionID  string `json:"session_id"`
	Subpath    string `json:"subpath,omitempty"`
}

// String renders the key as project_key/session_id[/subpath].
func (k Key) String() string {
	s := k.ProjectKey + "/" + k.SessionID
	if k.Subpath != "" {
		s += "/" + k.Subpath
	}
	return s
}

// Main is the key of the main transcript of k's session.
func (k Key) Main() Key { return Key{ProjectKey: k.ProjectKey, SessionID: k.SessionID} }

func (k Key) validate() error {
	if !safeName(k.ProjectKey) || !safeName(k.SessionID) {
		return fmt.Errorf("%w: %q", ErrBadKey, k.String())
	}
	if k.Subpath != "" {
		if path.IsAbs(k.Subpath) || path.Clean(k.Subpath) != k.Subpath || strings.HasPrefix(k.Subpath, "..") {
			return fmt.Errorf("%w: subpath %q", ErrBadKey, k.Subpath)
		}
		for _, part := range strings.Split(k.Subpath, "/") {
			if !safeName(part) {
				return fmt.Errorf("%w: subpath %q", ErrBadKey, k.Subpath)
			}
		}
	}
	return nil
}

func safeName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\\\x00")
}

// SessionInfo is one main session of a project; MTime is epoch milliseconds
// on the store's clock.
type SessionInfo struct {
	SessionID string `json:"session_id"`
	MTime     int64  `json:"mtime"`
}

// Summary is the per-session summary sidecar: Data is persisted verbatim.
type Summary struct {
	SessionID string         `json:"session_id"`
	MTime     int64          `json:"mtime"`
	Data      map[string]any `json:"data"`
}

// FoldFunc folds one appended batch of a main transcript into the session's
// summary data (prev is nil for the first batch). It must be pure.
type FoldFunc func(prev map[string]any, key Key, entries []json.RawMessage) map[string]any

// Logf receives warnings (a skipped corrupt line); the messages carry no
// package prefix. By default they go to log.Printf as "sessionstore: …".
type Logf func(format string, args ...any)

// Store is a session store backed by one SQLite file or one PostgreSQL
// database. It is safe for concurrent use, also by several processes on one
// file or database.
type Store struct {
	db        *sql.DB
	pg        bool   // PostgreSQL: $n placeholders, the database's clock
	path      string // the file, or the URL with its password masked
	workspace string
	trim      TrimPolicy
	ephemeral EphemeralPolicy
	prune     PrunePolicy
	fold      FoldFunc
	logf      Logf
	now       func() time.Time
	fence     FenceFunc // SetFence: every write's condition
	box       *outbox   // SetOutbox: writes kept while the database is away
	readOnly  bool      // WithReadOnly: opened to read, never migrated

	mu       sync.Mutex
	lastTime int64 // last mtime this process issued
	report   TrimReport

	closeOnce sync.Once
	closeErr  error
}

// Option configures Open and OpenURL.
type Option func(*Store)

// WithWorkspace sets the workspace the trim stage spills into
// (<dir>/<TrimPolicy.SpillDirname>); default: the current directory.
func WithWorkspace(dir string) Option { return func(s *Store) { s.workspace = dir } }

// WithTrim sets the trim policy (default DefaultTrimPolicy()).
func WithTrim(p TrimPolicy) Option { return func(s *Store) { s.trim = p } }

// WithEphemeral sets the expiry policy (default DefaultEphemeralPolicy()).
func WithEphemeral(p EphemeralPolicy) Option { return func(s *Store) { s.ephemeral = p } }

// WithPrune sets the denial pruning policy (default DefaultPrunePolicy()).
func WithPrune(p PrunePolicy) Option { return func(s *Store) { s.prune = p } }

// WithSummaryFold replaces the summary fold (default FoldSummary).
func WithSummaryFold(f FoldFunc) Option { return func(s *Store) { s.fold = f } }

// WithReadOnly opens the store to read only: the file must exist, it is
// opened read-only and never migrated (a reading command must not change
// a store, damaged or from an older flower); a schema older than this
// flower's is said, naming the command that upgrades it.
func WithReadOnly() Option { return func(s *Store) { s.readOnly = true } }

// WithLogf sets where warnings go.
func WithLogf(f Logf) Option { return func(s *Store) { s.logf = f } }

// Open opens (creating if needed) the store at path and migrates it.
func Open(path string, opts ...Option) (*Store, error) {
	s := newStore(path, opts)
	if s.readOnly {
		return openReadOnly(s)
	}
	// SQLite gives the -wal and -shm files the database file's mode:
	// creating it 0600 first keeps all three private.
	if path != ":memory:" {
		if f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600); err == nil {
			f.Close()
		}
	}
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(busyTimeout.Milliseconds(), 10))
	q.Set("_synchronous", "NORMAL")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite3", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sessionstore: open %s: %w", path, err)
	}
	if err := migrate(db); err != nil {
		db.Close()
		if syscall.Access(filepath.Dir(path), 2 /* W_OK */) != nil {
			return nil, fmt.Errorf("sessionstore: open %s: its folder is read-only: %w", path, err)
		}
		return nil, fmt.Errorf("sessionstore: open %s: %w", path, err)
	}
	s.db = db
	return s, nil
}

// newStore is a Store with the default policies and opts applied, not yet
// connected.
func newStore(path string, opts []Option) *Store {
	s := &Store{
		path:      path,
		workspace: ".",
		trim:      DefaultTrimPolicy(),
		ephemeral: DefaultEphemeralPolicy(),
		prune:     DefaultPrunePolicy(),
		fold:      FoldSummary,
		logf:      func(format string, a ...any) { log.Printf("sessionstore: "+format, a...) },
		now:       time.Now,
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// q adapts a query written with ? placeholders to the backend.
func (s *Store) q(query string) string {
	if s.pg {
		return rebind(query)
	}
	return query
}

// Close closes the database; closing twice is harmless.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if b := s.outbox(); b != nil {
			s.drain(b) // the writes kept meanwhile: made, or spooled
		}
		if err := s.db.Close(); err != nil {
			s.closeErr = fmt.Errorf("sessionstore: close: %w", err)
		}
	})
	return s.closeErr
}

// Checkpoint copies what SQLite's write-ahead log holds into the database
// file and empties the log (TRUNCATE), so that Close, which does the same,
// has nothing left to copy and no log to free: the Runtime calls it once a
// step has ended, so the log stays short over a long run. It waits at
// most checkpointPatience for other connections (a reader of an older
// snapshot, a writer); past that it copies what it can without waiting, as
// PASSIVE does, and Close finishes the job. PostgreSQL has nothing to do.
func (s *Store) Checkpoint(ctx context.Context) error {
	if s.pg {
		return nil
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("sessionstore: checkpoint: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", checkpointPatience.Milliseconds())); err != nil {
		return fmt.Errorf("sessionstore: checkpoint: %w", err)
	}
	// The connection goes back to the pool: it must wait as long as the
	// others again.
	defer conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA busy_timeout = %d", busyTimeout.Milliseconds()))
	if _, err := conn.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return fmt.Errorf("sessionstore: checkpoint: %w", err)
	}
	return nil
}

// busyTimeout is how long a statement waits for another connection's
// lock; checkpointPatience bounds how long Checkpoint waits for other
// connections before it settles for what it can copy.
const (
	busyTimeout        = 30 * time.Second
	checkpointPatience = 50 * time.Millisecond
)

// Path is the database file, or the PostgreSQL URL with its password masked.
func (s *Store) Path() string { return s.path }

// nextMTime is now in epoch ms, but always above every
// mtime already in the database and every one this process issued, so
// list_sessions and summaries share one strictly monotonic clock. It runs
// inside the write transaction, which serializes it across processes. On
// PostgreSQL "now" is the database's clock, not this machine's.
func (s *Store) nextMTime(ctx context.Context, tx *sql.Tx) (int64, error) {
	var t int64
	if s.pg {
		pt, err := pgNextMTime(ctx, tx)
		if err != nil {
			return 0, err
		}
		t = pt
	} else {
		var dbMax sql.NullInt64
		if err := tx.QueryRowContext(ctx, "SELECT max(mtime) FROM meta").Scan(&dbMax); err != nil {
			return 0, err
		}
		t = s.now().UnixMilli()
		if dbMax.Valid && t <= dbMax.Int64 {
			t = dbMax.Int64 + 1
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t <= s.lastTime {
		t = s.lastTime + 1
	}
	s.lastTime = t
	return t, nil
}

// Append stores entries under key in order, skipping any whose uuid the key
// already holds. Every entry must be a JSON object. An empty batch changes
// nothing. A failed write (read-only file, full disk) returns the error and
// stores none of the batch.
func (s *Store) Append(ctx context.Context, key Key, entries []json.RawMessage) error {
	if err := s.append(ctx, key, entries); err != nil {
		return fmt.Errorf("sessionstore: append %s: %w", key, err)
	}
	return nil
}

// append is Append without the package's error prefix (Mirror and Import
// add their own).
func (s *Store) append(ctx context.Context, key Key, entries []json.RawMessage) error {
	if len(entries) == 0 {
		return nil
	}
	if err := key.validate(); err != nil {
		return err
	}
	entries = redactEntries(entries)
	for i, e := range entries {
		if !gjson.ValidBytes(e) || !gjson.Parse(view(e)).IsObject() { // read in place: an entry may be many megabytes
			return &invalidError{fmt.Sprintf("entry %d is not a JSON object", i)}
		}
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		mtime, err := s.nextMTime(ctx, tx)
		if err != nil {
			return err
		}
		stmt, err := tx.PrepareContext(ctx, s.q(`INSERT INTO entries (project_key, session_id, subpath, uuid, mtime, facts, entry)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`))
		if err != nil {
			return err
		}
		defer stmt.Close()
		inserted := make([]json.RawMessage, 0, len(entries))
		for _, e := range entries {
			m := parseLine(e)
			var uuid any
			if m.uuid != "" {
				uuid = m.uuid
			}
			var facts any
			if f := encodeFacts(m); f != "" {
				facts = f
			}
			res, err := stmt.ExecContext(ctx, key.ProjectKey, key.SessionID, key.Subpath, uuid, mtime, facts, []byte(e))
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err == nil && n > 0 {
				inserted = append(inserted, e)
			}
		}
		if len(inserted) == 0 {
			return nil // all duplicates: nothing changed, the clock stays
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO meta (project_key, session_id, subpath, mtime) VALUES (?, ?, ?, ?)
			ON CONFLICT (project_key, session_id, subpath) DO UPDATE SET mtime = excluded.mtime`),
			key.ProjectKey, key.SessionID, key.Subpath, mtime); err != nil {
			return err
		}
		if key.Subpath == "" {
			if err := s.foldSummary(ctx, tx, key, inserted, mtime); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *Store) foldSummary(ctx context.Context, tx *sql.Tx, key Key, entries []json.RawMessage, mtime int64) error {
	var prev map[string]any
	var raw string
	switch err := tx.QueryRowContext(ctx, s.q("SELECT data FROM summaries WHERE project_key = ? AND session_id = ?"),
		key.ProjectKey, key.SessionID).Scan(&raw); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return err
	default:
		if err := json.Unmarshal([]byte(raw), &prev); err != nil {
			return fmt.Errorf("summary of %s: %w", key, err)
		}
	}
	data, err := json.Marshal(s.fold(prev, key, entries))
	if err != nil {
		return fmt.Errorf("summary of %s: %w", key, err)
	}
	_, err = tx.ExecContext(ctx, s.q(`INSERT INTO summaries (project_key, session_id, mtime, data) VALUES (?, ?, ?, ?)
		ON CONFLICT (project_key, session_id) DO UPDATE SET mtime = excluded.mtime, data = excluded.data`),
		key.ProjectKey, key.SessionID, mtime, string(data))
	return err
}

// Load returns key's entries in append order, exactly as stored; nil and no
// error for a key the store does not hold.
func (s *Store) Load(ctx context.Context, key Key) ([]json.RawMessage, error) {
	if err := key.validate(); err != nil {
		return nil, fmt.Errorf("sessionstore: load: %w", err)
	}
	out, err := queryAll(ctx, s.db, s.q(`SELECT entry FROM entries
		WHERE project_key = ? AND session_id = ? AND subpath = ? ORDER BY seq`),
		func(rows *sql.Rows) (json.RawMessage, error) { var b []byte; err := rows.Scan(&b); return b, err },
		key.ProjectKey, key.SessionID, key.Subpath)
	if err != nil {
		return nil, fmt.Errorf("sessionstore: load %s: %w", key, err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// queryAll runs query with args on db and makes one T of each row with
// scan, in row order; no rows is an empty list, not nil.
func queryAll[T any](ctx context.Context, db *sql.DB, query string, scan func(*sql.Rows) (T, error), args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// ListSessions lists the main sessions of projectKey (never subagent
// transcripts), newest first.
func (s *Store) ListSessions(ctx context.Context, projectKey string) ([]SessionInfo, error) {
	out, err := queryAll(ctx, s.db, s.q(`SELECT session_id, mtime FROM meta
		WHERE project_key = ? AND subpath = '' ORDER BY mtime DESC`),
		func(rows *sql.Rows) (si SessionInfo, err error) { err = rows.Scan(&si.SessionID, &si.MTime); return },
		projectKey)
	if err != nil {
		return nil, fmt.Errorf("sessionstore: list sessions: %w", err)
	}
	return out, nil
}

// ListSessionSummaries returns the summary of every main session of
// projectKey, newest first.
func (s *Store) ListSessionSummaries(ctx context.Context, projectKey string) ([]Summary, error) {
	out, err := queryAll(ctx, s.db, s.q(`SELECT session_id, mtime, data FROM summaries
		WHERE project_key = ? ORDER BY mtime DESC`), func(rows *sql.Rows) (sum Summary, err error) {
		var data string
		if err := rows.Scan(&sum.SessionID, &sum.MTime, &data); err != nil {
			return sum, err
		}
		if err := json.Unmarshal([]byte(data), &sum.Data); err != nil {
			return sum, fmt.Errorf("%s: %w", sum.SessionID, err)
		}
		return sum, nil
	}, projectKey)
	if err != nil {
		return nil, fmt.Errorf("sessionstore: list summaries: %w", err)
	}
	return out, nil
}

// Delete removes key. A main key takes its subagent transcripts and its
// summary with it; a subkey goes alone. Deleting an unknown key is no error.
func (s *Store) Delete(ctx context.Context, key Key) error {
	if err := key.validate(); err != nil {
		return fmt.Errorf("sessionstore: delete: %w", err)
	}
	if err := s.delete(ctx, key); err != nil {
		return fmt.Errorf("sessionstore: delete %s: %w", key, err)
	}
	return nil
}

func (s *Store) delete(ctx context.Context, key Key) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		where, args := "project_key = ? AND session_id = ? AND subpath = ?", []any{key.ProjectKey, key.SessionID, key.Subpath}
		if key.Subpath == "" {
			where, args = "project_key = ? AND session_id = ?", args[:2]
			if _, err := tx.ExecContext(ctx, s.q("DELETE FROM summaries WHERE "+where), args...); err != nil {
				return err
			}
		}
		for _, table := range []string{"entries", "meta"} {
			if _, err := tx.ExecContext(ctx, s.q("DELETE FROM "+table+" WHERE "+where), args...); err != nil {
				return err
			}
		}
		return nil
	})
}

// ListSubkeys lists the subpaths stored under key's session (never the main
// transcript), sorted.
func (s *Store) ListSubkeys(ctx context.Context, key Key) ([]string, error) {
	out, err := s.subkeys(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("sessionstore: list subkeys %s: %w", key, err)
	}
	return out, nil
}

func (s *Store) subkeys(ctx context.Context, key Key) ([]string, error) {
	return queryAll(ctx, s.db, s.q(`SELECT subpath FROM meta
		WHERE project_key = ? AND session_id = ? AND subpath != '' ORDER BY subpath`),
		func(rows *sql.Rows) (sp string, err error) { err = rows.Scan(&sp); return },
		key.ProjectKey, key.SessionID)
}

// SessionRef is one main session of any project, for listings.
type SessionRef struct {
	Key     Key   `json:"key"`
	MTime   int64 `json:"mtime"`
	Entries int   `json:"entries"`
	// Subkeys counts the session's subagent transcripts.
	Subkeys int `json:"subkeys"`
}

// Sessions lists every main session in the store, newest first.
func (s *Store) Sessions(ctx context.Context) ([]SessionRef, error) {
	out, err := queryAll(ctx, s.db, s.q(`SELECT m.project_key, m.session_id, m.mtime,
		(SELECT count(*) FROM entries e WHERE e.project_key = m.project_key AND e.session_id = m.session_id AND e.subpath = ''),
		(SELECT count(*) FROM meta x WHERE x.project_key = m.project_key AND x.session_id = m.session_id AND x.subpath != '')
		FROM meta m WHERE m.subpath = '' ORDER BY m.mtime DESC`), func(rows *sql.Rows) (r SessionRef, err error) {
		err = rows.Scan(&r.Key.ProjectKey, &r.Key.SessionID, &r.MTime, &r.Entries, &r.Subkeys)
		return
	})
	if err != nil {
		return nil, fmt.Errorf("sessionstore: sessions: %w", err)
	}
	return out, nil
}

// Find resolves a session id (or a unique prefix of one) to its main key in
// whatever project holds it. It fails with ErrNotFound, naming the id and the
// database, when no session matches, and says so when a prefix is ambiguous.
func (s *Store) Find(ctx context.Context, id string) (Key, error) {
	if id == "" {
		return Key{}, fmt.Errorf("sessionstore: find: empty session id: %w", ErrNotFound)
	}
	found, err := queryAll(ctx, s.db, s.q(`SELECT project_key, session_id FROM meta
		WHERE subpath = '' AND (session_id = ? OR substr(session_id, 1, ?) = ?) ORDER BY session_id = ? DESC, mtime DESC`),
		func(rows *sql.Rows) (k Key, err error) { err = rows.Scan(&k.ProjectKey, &k.SessionID); return },
		id, len(id), id, id)
	if err != nil {
		return Key{}, fmt.Errorf("sessionstore: find %q: %w", id, err)
	}
	switch {
	case len(found) == 0:
		return Key{}, fmt.Errorf("sessionstore: session %q is not in %s: %w", id, s.path, ErrNotFound)
	case found[0].SessionID == id || len(found) == 1:
		return found[0], nil
	default:
		return Key{}, fmt.Errorf("sessionstore: session id prefix %q is ambiguous (%s, %s, …): %w",
			id, found[0], found[1], ErrNotFound)
	}
}

// ensureDir creates dir (and parents) private to the user.
func ensureDir(dir string) error { return os.MkdirAll(dir, 0o700) }

// Holders lists every main key that holds session id exactly (one per
// workspace that recorded it), newest first.
func (s *Store) Holders(ctx context.Context, id string) ([]Key, error) {
	found, err := queryAll(ctx, s.db, s.q(`SELECT project_key, session_id FROM meta WHERE subpath = '' AND session_id = ? ORDER BY mtime DESC`),
		func(rows *sql.Rows) (k Key, err error) { err = rows.Scan(&k.ProjectKey, &k.SessionID); return }, id)
	if err != nil {
		return nil, fmt.Errorf("sessionstore: holders of %q: %w", id, err)
	}
	return found, nil
}

// warnf writes a warning where the store's warnings go (WithLogf).
func (s *Store) warnf(format string, args ...any) { s.logf(format, args...) }

// redactEntries is entries with the credentials of this process's
// environment and every secret shape replaced in their decoded strings
// (redact.Process): whatever writes to the store (Mirror, Import, Append),
// nothing secret is kept. The slice is copied only when an entry changes.
func redactEntries(entries []json.RawMessage) []json.RawMessage {
	out := entries
	for i, e := range entries {
		if clean := redact.Process().Bytes(e); len(clean) != len(e) || len(e) > 0 && &clean[0] != &e[0] {
			if &out[0] == &entries[0] {
				out = append([]json.RawMessage(nil), entries...)
			}
			out[i] = clean
		}
	}
	return out
}
