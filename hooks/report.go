package hooks

import (
	"encoding/json"
	"fmt"
	"time"
)

// reportTimeout bounds the whole report (connect and write) where the
// platform needs a timeout. The socket is local; when the listener is
// gone, stuck or its backlog full, the decision must not wait.
const reportTimeout = 100 * time.Millisecond

// sendReport writes r as one JSON line to the Unix socket at path and
// closes the connection without waiting for an answer. An empty path means
// reporting is off (nil). Errors are returned for tests and diagnostics;
// Run ignores them: reporting is best-effort and never changes a decision.
func sendReport(path string, r Report, timeout time.Duration) error {
	if path == "" {
		return nil
	}
	line, ok := marshalReport(r)
	if !ok {
		var err error
		if line, err = json.Marshal(r); err != nil {
			return fmt.Errorf("hooks: report: %w", err)
		}
	}
	if err := sendLine(path, append(line, '\n'), timeout); err != nil {
		return fmt.Errorf("hooks: report: %w", err)
	}
	return nil
}
