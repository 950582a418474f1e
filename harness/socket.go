package harness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// reportServer is the private Unix socket that flower-hook reports to
// (design.md §3): one JSON line per connection (more are accepted), each
// acknowledged with {"ok":true}. Its path goes to the child as FLOWER_SOCKET.
type reportServer struct {
	dir, path string
	ln        net.Listener
	handle    func(line []byte)
	wg        sync.WaitGroup
	once      sync.Once
}

// startReportServer listens in a fresh 0700 directory on a 0600 socket.
func startReportServer(handle func(line []byte)) (*reportServer, error) {
	dir, err := os.MkdirTemp("", "flower-sock-")
	if err != nil {
		return nil, fmt.Errorf("harness: socket: %w", err)
	}
	path := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("harness: socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("harness: socket: %w", err)
	}
	s := &reportServer{dir: dir, path: path, ln: ln, handle: handle}
	s.wg.Add(1)
	go s.serve()
	return s, nil
}

func (s *reportServer) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			sc := bufio.NewScanner(c)
			sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
			for sc.Scan() {
				line := append([]byte(nil), sc.Bytes()...)
				if !json.Valid(line) {
					c.Write([]byte(`{"ok":false}` + "\n"))
					continue
				}
				s.handle(line)
				c.Write([]byte(`{"ok":true}` + "\n"))
			}
		}()
	}
}

// Close stops listening, waits for open connections and removes the
// directory. It is idempotent.
func (s *reportServer) Close() error {
	var err error
	s.once.Do(func() {
		err = s.ln.Close()
		s.wg.Wait()
		os.RemoveAll(s.dir)
	})
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
