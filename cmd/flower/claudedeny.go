package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/flowerhq/flower/hooks"
	"github.com/flowerhq/flower/internal/linesock"
)

// denialEcho listens for flower-hook's reports during `flower claude` off a
// terminal and prints each denial on w (stderr) as one line: in `-p` text
// mode claude itself shows nothing of it (the same text, exit 0), so a
// person or a script would never learn that a guard stopped a call. Under a
// terminal claude's own screen shows the denial, and nothing is printed
// over it. Close stops listening; the socket's folder is removed.
type denialEcho struct {
	srv *linesock.Server
	mu  sync.Mutex
	w   io.Writer
}

func startDenialEcho(w io.Writer) (*denialEcho, error) {
	d := &denialEcho{w: w}
	srv, err := linesock.Listen("flower-claude-", 10*time.Second, func(_ context.Context, line []byte) []byte {
		d.handle(line)
		return []byte(`{"ok":true}`)
	})
	if err != nil {
		return nil, err
	}
	d.srv = srv
	return d, nil
}

// Path is the socket for flower-hook's environment (FLOWER_SOCKET).
func (d *denialEcho) Path() string { return d.srv.Path() }

func (d *denialEcho) Close() { d.srv.Close() }

func (d *denialEcho) handle(line []byte) {
	var r hooks.Report
	if json.Unmarshal(line, &r) != nil || r.Decision != hooks.Deny {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	fmt.Fprintln(d.w, denialLine(r))
}

// denialLine is the one line printed for a denial: the tool, the guard and
// the reason the model was given, on one line.
func denialLine(r hooks.Report) string {
	line := fmt.Sprintf("flower: the %s guard denied %s", r.Guard, r.Tool)
	if reason, _ := r.Detail["reason"].(string); reason != "" {
		line += ": " + strings.Join(strings.Fields(reason), " ")
	}
	return line
}
