package sessionstore

import (
	"context"
	"database/sql"
	"fmt"
)

// Adopt copies the session of from (its main transcript and every subagent
// transcript, with their summary) under projectKey, in one transaction:
// entries in their order, those whose uuid projectKey already holds
// skipped (lines without a uuid only into a transcript projectKey does not
// hold yet). A resume in another workspace then continues a complete copy:
// claude appends only its new lines, which chain onto the copied ones, so a
// later resume of the newest copy still carries the whole conversation.
// It returns how many entries it copied.
func (s *Store) Adopt(ctx context.Context, from Key, projectKey string) (int64, error) {
	from = from.Main()
	to := Key{ProjectKey: projectKey, SessionID: from.SessionID}
	if err := to.validate(); err != nil {
		return 0, fmt.Errorf("sessionstore: adopt %s: %w", from, err)
	}
	if from.ProjectKey == projectKey {
		return 0, nil
	}
	var n int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		mtime, err := s.nextMTime(ctx, tx)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, s.q(`INSERT INTO entries (project_key, session_id, subpath, uuid, mtime, facts, entry)
		SELECT ?, e.session_id, e.subpath, e.uuid, ?, e.facts, e.entry FROM entries e
		WHERE e.project_key = ? AND e.session_id = ? AND (e.uuid IS NOT NULL OR NOT EXISTS (
			SELECT 1 FROM entries t WHERE t.project_key = ? AND t.session_id = e.session_id AND t.subpath = e.subpath))
		ORDER BY e.seq ON CONFLICT DO NOTHING`), projectKey, mtime, from.ProjectKey, from.SessionID, projectKey)
		if err != nil {
			return err
		}
		if n, _ = res.RowsAffected(); n == 0 {
			return nil
		}
		for _, q := range []string{
			`INSERT INTO meta (project_key, session_id, subpath, mtime) SELECT ?, session_id, subpath, ? FROM meta
			WHERE project_key = ? AND session_id = ? ON CONFLICT (project_key, session_id, subpath) DO UPDATE SET mtime = excluded.mtime`,
			`INSERT INTO summaries (project_key, session_id, mtime, data) SELECT ?, session_id, ?, data FROM summaries
			WHERE project_key = ? AND session_id = ? ON CONFLICT (project_key, session_id) DO NOTHING`,
		} {
			if _, err := tx.ExecContext(ctx, s.q(q), projectKey, mtime, from.ProjectKey, from.SessionID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sessionstore: adopt %s: %w", from, err)
	}
	return n, nil
}
