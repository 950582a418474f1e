package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/flowerhq/flower/internal/linesock"
)

// startReportServer opens the private Unix socket that flower-hook reports
// to (a linesock.Server): one JSON line per connection (more
// are accepted), each handed to handle and acknowledged with {"ok":true};
// a line that is not JSON gets {"ok":false}. Its path goes to the child as
// FLOWER_SOCKET; a connection lives at most 10 s.
//
// The same socket answers flower-hook-lite's hook calls (answerHookCall);
// their reports reach handle after the answer is on its way, and Close
// waits for them.
func startReportServer(handle func(line []byte)) (*reportServer, error) {
	rs := &reportServer{}
	later := func(line []byte) {
		rs.pending.Add(1)
		go func() {
			defer rs.pending.Done()
			handle(line)
		}()
	}
	s, err := linesock.Listen("flower-sock-", 10*time.Second, func(_ context.Context, line []byte) []byte {
		if reply, ok := answerHookCall(line, later); ok {
			return reply
		}
		if !json.Valid(line) {
			return []byte(`{"ok":false}`)
		}
		handle(line)
		return []byte(`{"ok":true}`)
	})
	if err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	rs.Server = s
	return rs, nil
}

// reportServer is the report socket and the reports of answered hook
// calls still being handled.
type reportServer struct {
	*linesock.Server
	pending sync.WaitGroup
}

// Close closes the socket (waiting for its connections) and then for the
// reports still being handled.
func (s *reportServer) Close() error {
	err := s.Server.Close()
	s.pending.Wait()
	return err
}

// reportEvent turns one socket line into an Event: kind from the line's
// "kind" (default "report"), the whole line as Data and Raw.
func reportEvent(line []byte) Event {
	var data map[string]any
	_ = json.Unmarshal(line, &data)
	kind, _ := data["kind"].(string)
	if kind == "" {
		kind = EventReport
	}
	return Event{Kind: kind, Data: data, Raw: json.RawMessage(line), Time: time.Now()}
}
