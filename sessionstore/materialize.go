package sessionstore

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/internal/atomicfile"
	"github.com/flowerhq/flower/internal/login"
)

// MaterializeKey writes key's session for a resume:
// <configDir>/projects/<ProjectKey>/<SessionID>.jsonl from the load pipeline
// (as LoadForResume), and every subagent transcript of the session under
// <configDir>/projects/<ProjectKey>/<SessionID>/<subpath>.jsonl, with its
// .meta.json. Then
//
//	CLAUDE_CONFIG_DIR=configDir CLAUDE_CODE_PROJECT_DIR_NAME=<ProjectKey> claude --resume=<SessionID>
//
// replays exactly that. Directories are created 0700, files 0600; existing
// files are replaced. The report (also LastReport) covers every transcript
// written. A key that is not stored fails with ErrNotFound.
func (s *Store) MaterializeKey(ctx context.Context, key Key, configDir string) (TrimReport, error) {
	return s.materializeAs(ctx, key, key.ProjectKey, configDir)
}

// Materialize is MaterializeKey in the shape a harness.Runtime calls it
// (so a *Store is the Runtime's session store as it is): the session is
// loaded for a resume in projectKey's workspace, found by its exact id
// wherever it is stored (a run that was not portable keys it by claude's own
// project dir, another checkout path or machine by that path). When several
// workspaces hold it, the newest wins and a warning says so; one recorded
// elsewhere is first copied under projectKey (Adopt), so that what claude
// appends continues a complete transcript there.
func (s *Store) Materialize(ctx context.Context, projectKey, sessionID, configDir string) error {
	holders, err := s.Holders(ctx, sessionID)
	if err != nil || len(holders) == 0 {
		_, err := s.MaterializeKey(ctx, Key{ProjectKey: projectKey, SessionID: sessionID}, configDir)
		return err
	}
	found := holders[0]
	if len(holders) > 1 {
		others := make([]string, 0, len(holders)-1)
		for _, h := range holders[1:] {
			others = append(others, h.ProjectKey)
		}
		s.warnf("session %s is stored under %d workspaces; resuming the newest, %s (also in %s)",
			sessionID, len(holders), found.ProjectKey, strings.Join(others, ", "))
	}
	if _, err := s.Adopt(ctx, found, projectKey); err != nil {
		return err
	}
	_, err = s.MaterializeKey(ctx, Key{ProjectKey: projectKey, SessionID: sessionID}, configDir)
	return err
}

// materializeAs is MaterializeKey writing the session under another project
// key: <configDir>/projects/<projectKey>/…, for a resume in a workspace other
// than the one that recorded it (another checkout path, another machine, or
// claude's own project dir of a run that was not portable).
func (s *Store) materializeAs(ctx context.Context, key Key, projectKey, configDir string) (TrimReport, error) {
	key = key.Main()
	rep, err := s.materialize(ctx, key, projectKey, configDir)
	if err != nil {
		return TrimReport{}, fmt.Errorf("sessionstore: materialize %s: %w", key, err)
	}
	s.setReport(rep)
	return rep, nil
}

func (s *Store) materialize(ctx context.Context, key Key, projectKey, configDir string) (TrimReport, error) {
	upTo, err := s.lastSeq(ctx, key)
	if err != nil {
		return TrimReport{}, err
	}
	if upTo == 0 {
		return TrimReport{}, fmt.Errorf("not in %s: %w", s.path, ErrNotFound)
	}
	dir := filepath.Join(configDir, "projects", projectKey)
	rep, err := s.materializeOne(filepath.Join(dir, key.SessionID+".jsonl"), s.factSource(ctx, key, upTo), s.rowSource(ctx, key, upTo))
	if err != nil {
		return rep, err
	}
	subs, err := s.subkeys(ctx, key)
	if err != nil {
		return rep, err
	}
	for _, sp := range subs {
		sub := Key{ProjectKey: key.ProjectKey, SessionID: key.SessionID, Subpath: sp}
		if upTo, err = s.lastSeq(ctx, sub); err != nil {
			return rep, err
		}
		var meta []byte
		all := s.factSource(ctx, sub, upTo)
		metas := metaSource{hint: all.hint, each: func(each func(lineMeta) error) error {
			return all.each(func(m lineMeta) error {
				if m.typ == agentMetadataType {
					return nil
				}
				return each(m)
			})
		}}
		src := func(each func([]byte) error) error {
			return s.rowSource(ctx, sub, upTo)(func(raw []byte) error {
				if gjson.GetBytes(raw, "type").String() == agentMetadataType {
					meta = append(meta[:0], raw...) // the last one wins
					return nil
				}
				return each(raw)
			})
		}
		base := filepath.Join(dir, key.SessionID, filepath.FromSlash(sp))
		r, err := s.materializeOne(base+".jsonl", metas, src)
		if err != nil {
			return rep, err
		}
		if r.Entries > 0 {
			rep.add(r)
		} else {
			os.Remove(base + ".jsonl")
		}
		if meta != nil {
			if err := writePrivate(base+".meta.json", stripType(meta)); err != nil {
				return rep, err
			}
		}
	}
	return rep, nil
}

// materializeOne runs the pipeline from src into file.
func (s *Store) materializeOne(file string, metas metaSource, src source) (TrimReport, error) {
	if err := ensureDir(filepath.Dir(file)); err != nil {
		return TrimReport{}, err
	}
	f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return TrimReport{}, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rep, err := s.pipeline(metas, src, func(line []byte) error {
		w.Write(line)
		return w.WriteByte('\n')
	}, false)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return rep, fmt.Errorf("write %s: %w", file, err)
	}
	return rep, nil
}

// lastSeq is the newest row of key (0: none). Both pipeline passes read up
// to it, so rows appended meanwhile do not shift the second pass.
func (s *Store) lastSeq(ctx context.Context, key Key) (int64, error) {
	var seq sql.NullInt64
	err := s.db.QueryRowContext(ctx, s.q(`SELECT max(seq) FROM entries
		WHERE project_key = ? AND session_id = ? AND subpath = ?`), key.ProjectKey, key.SessionID, key.Subpath).Scan(&seq)
	if err != nil {
		return 0, err
	}
	return seq.Int64, nil
}

// rowSource streams key's rows up to seq upTo, without holding them all.
// It reads through the driver directly: each row's bytes are copied out of
// SQLite once, instead of once more into database/sql's buffer.
func (s *Store) rowSource(ctx context.Context, key Key, upTo int64) source {
	return func(each func([]byte) error) error {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		return conn.Raw(func(dc any) error {
			qc, ok := dc.(driver.QueryerContext)
			if !ok {
				return fmt.Errorf("database driver cannot query")
			}
			rows, err := qc.QueryContext(ctx, s.q(`SELECT entry FROM entries
				WHERE project_key = ? AND session_id = ? AND subpath = ? AND seq <= ? ORDER BY seq`),
				[]driver.NamedValue{{Ordinal: 1, Value: key.ProjectKey}, {Ordinal: 2, Value: key.SessionID},
					{Ordinal: 3, Value: key.Subpath}, {Ordinal: 4, Value: upTo}})
			if err != nil {
				return err
			}
			defer rows.Close()
			dest := make([]driver.Value, 1)
			for {
				switch err := rows.Next(dest); {
				case errors.Is(err, io.EOF):
					return nil
				case err != nil:
					return err
				}
				var b []byte
				switch v := dest[0].(type) {
				case []byte:
					b = v
				case string:
					b = []byte(v)
				default:
					return fmt.Errorf("entry of type %T", v)
				}
				if err := each(b); err != nil {
					return err
				}
			}
		})
	}
}

// stripType turns an agent_metadata entry back into the .meta.json object.
func stripType(meta []byte) []byte {
	prefix := []byte(`{"type":"` + agentMetadataType + `"`)
	if bytes.HasPrefix(meta, prefix) {
		rest := meta[len(prefix):]
		if bytes.HasPrefix(rest, []byte(",")) {
			return append([]byte{'{'}, rest[1:]...)
		}
		return []byte("{}")
	}
	var m map[string]any
	if json.Unmarshal(meta, &m) != nil {
		return meta
	}
	delete(m, "type")
	b, _ := json.Marshal(m)
	return b
}

func writePrivate(file string, data []byte) error {
	if err := ensureDir(filepath.Dir(file)); err != nil {
		return err
	}
	return atomicfile.Write(file, data, 0o600)
}

// CopyCredentials copies the login of one config dir into another, the way
// the official SDK does before a store-backed resume: .credentials.json (on
// macOS read from the Keychain entry claude keeps it in, internal/login) and
// .claude.json, each with every "refreshToken" removed (a child that spends a
// single-use refresh token would log the user out). For the default config
// dir ~/.claude, .claude.json is read from beside it (~/.claude.json). A file
// that does not exist is skipped (API-key users have none); settings.json is
// not copied (flower passes its own settings per step).
func CopyCredentials(fromConfigDir, toConfigDir string) error {
	for _, name := range []string{".credentials.json", ".claude.json"} {
		src := filepath.Join(fromConfigDir, name)
		if name == ".claude.json" && filepath.Base(filepath.Clean(fromConfigDir)) == ".claude" {
			if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
				src = filepath.Join(filepath.Dir(filepath.Clean(fromConfigDir)), name)
			}
		}
		data, err := readLogin(fromConfigDir, name, src)
		if err != nil {
			return fmt.Errorf("sessionstore: copy credentials: %w", err)
		}
		if data == nil {
			continue
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return fmt.Errorf("sessionstore: copy credentials: %s: %w", src, err)
		}
		out, err := json.MarshalIndent(dropKey(v, "refreshToken"), "", "  ")
		if err != nil {
			return fmt.Errorf("sessionstore: copy credentials: %w", err)
		}
		dst := filepath.Join(toConfigDir, name)
		if samePrivateFile(dst, out) {
			continue // copied by an earlier step of this run dir: no write, no fsync
		}
		if err := writePrivate(dst, out); err != nil {
			return fmt.Errorf("sessionstore: copy credentials: %w", err)
		}
	}
	return nil
}

// readLogin reads the login file name from src (nil when it does not
// exist); .credentials.json comes from where this platform keeps it for
// configDir (internal/login: the file, on macOS the Keychain first).
func readLogin(configDir, name, src string) ([]byte, error) {
	if name == login.CredentialsFile {
		return login.Find(login.Sources(configDir, os.Getenv)), nil
	}
	data, err := os.ReadFile(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// samePrivateFile reports whether file is a regular 0600 file holding
// exactly data.
func samePrivateFile(file string, data []byte) bool {
	st, err := os.Lstat(file)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 || st.Size() != int64(len(data)) {
		return false
	}
	old, err := os.ReadFile(file)
	return err == nil && bytes.Equal(old, data)
}

// dropKey removes every object member called name, at any depth.
func dropKey(v any, name string) any {
	switch x := v.(type) {
	case map[string]any:
		delete(x, name)
		for k, e := range x {
			x[k] = dropKey(e, name)
		}
	case []any:
		for i, e := range x {
			x[i] = dropKey(e, name)
		}
	}
	return v
}
