package harness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/flowerhq/flower/internal/redact"
)

// ReadEvents reads <run_dir>/<run>/events.jsonl. A line that does not parse
// (a torn write of a killed process) is skipped and counted in skipped.
func ReadEvents(path string) (events []Event, skipped int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("harness: events: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			skipped++
			continue
		}
		events = append(events, ev)
	}
	if err := sc.Err(); err != nil {
		return events, skipped, fmt.Errorf("harness: events %s: %w", path, err)
	}
	return events, skipped, nil
}

// eventLog appends Events as JSON lines to <run_dir>/<run>/events.jsonl.
type eventLog struct {
	mu   sync.Mutex
	f    *os.File
	red  *redact.Redactor
	path string
	head chainHead // the chain so far (ledger.go)
}

// openEventLog opens path for appending (0600); red keeps secrets out.
func openEventLog(path string, red *redact.Redactor) (*eventLog, error) {
	if err := privateDir(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("harness: events: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("harness: events: %w", err)
	}
	l := &eventLog{f: f, red: red, path: path}
	if lines, err := eventLines(path); err == nil && len(lines) > 0 {
		l.head = chainHead{n: len(lines), last: hashHex(lines[len(lines)-1])}
	}
	return l, nil
}

func (l *eventLog) write(ev Event) {
	data, err := json.Marshal(ev)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		line := chained(l.red.Bytes(data), l.head.last)
		if _, err := l.f.Write(append(line, '\n')); err != nil {
			return
		}
		l.head = chainHead{n: l.head.n + 1, last: hashHex(line)}
		_ = l.head.save(l.path)
	}
}

func (l *eventLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
