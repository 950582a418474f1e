package sessionstore

import (
	"context"
	"database/sql"
	"fmt"
	"path"
	"strings"

	"github.com/flowerhq/flower/internal/redact"
)

// Document is one of a flow's documents as the store keeps it: Name is its
// path relative to the flow's workbench ("notes/需求.md"), Body the file's
// bytes, UpdatedAt when it was last put (Unix milliseconds, this machine's
// clock).
type Document struct {
	Name      string `json:"name"`
	Body      []byte `json:"body"`
	UpdatedAt int64  `json:"updated_at"`
}

// PutDocuments stores docs under flow in one transaction, replacing earlier
// versions of the same names; documents not named stay as they were.
// Credentials are replaced in every body first (redact.Process). A
// name must be a clean relative path without ".." (it is written back under
// a workbench).
func (s *Store) PutDocuments(ctx context.Context, flow string, docs []Document) error {
	if flow == "" {
		return fmt.Errorf("sessionstore: put documents: empty flow")
	}
	for _, d := range docs {
		if !safeDocName(d.Name) {
			return fmt.Errorf("sessionstore: put documents of %s: unsafe name %q", flow, d.Name)
		}
	}
	clean := make([]Document, len(docs))
	for i, d := range docs {
		clean[i] = Document{Name: d.Name, Body: redact.Process().Bytes(d.Body)}
	}
	return s.deliver(ctx, outWrite{Kind: "documents", Flow: flow, Docs: clean})
}

// putDocuments is PutDocuments' write.
func (s *Store) putDocuments(ctx context.Context, flow string, docs []Document) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		now := s.now().UnixMilli()
		for _, d := range docs { // redacted by PutDocuments
			if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO documents (flow, name, body, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (flow, name) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at`),
				flow, d.Name, d.Body, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sessionstore: put documents of %s: %w", flow, err)
	}
	return nil
}

// Documents returns flow's documents by name (none: an empty list).
func (s *Store) Documents(ctx context.Context, flow string) ([]Document, error) {
	out, err := queryAll(ctx, s.db, s.q("SELECT name, body, updated_at FROM documents WHERE flow = ? ORDER BY name"),
		func(rows *sql.Rows) (d Document, err error) {
			err = rows.Scan(&d.Name, &d.Body, &d.UpdatedAt)
			return
		}, flow)
	if err != nil {
		return nil, fmt.Errorf("sessionstore: documents of %s: %w", flow, err)
	}
	return out, nil
}

// DeleteDocuments removes every document of flow and returns how many
// there were: a flow started over (flower --new --flow NAME) must not
// bring an earlier flow's handoffs or lineage into another workspace.
func (s *Store) DeleteDocuments(ctx context.Context, flow string) (int64, error) {
	if flow == "" {
		return 0, fmt.Errorf("sessionstore: delete documents: empty flow")
	}
	var n int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.q("DELETE FROM documents WHERE flow = ?"), flow)
		if err == nil {
			n, _ = res.RowsAffected()
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sessionstore: delete documents of %s: %w", flow, err)
	}
	return n, nil
}

// safeDocName: a clean, relative, slash-separated path that stays below
// where it is written.
func safeDocName(n string) bool {
	if n == "" || path.IsAbs(n) || path.Clean(n) != n || n == "." || strings.HasPrefix(n, "../") || n == ".." ||
		strings.ContainsAny(n, "\\\x00") {
		return false
	}
	return true
}
