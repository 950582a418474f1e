// Package linesock is the local line server: a private Unix socket on which
// each request is one line and each reply is one line. The harness's report
// socket (flower-hook → flower) and the flow's human-channel relay
// (`flower mcp-channel` → flower) are both one of these.
//
// Lifecycle: Listen makes a fresh 0700 folder in the temp dir with a 0600
// socket in it and serves until Close; ListenAt does the same at a path
// FreshPath named earlier (nothing exists before ListenAt, so the path can
// be handed out first). Close stops listening, cancels the context the
// handler got, gives open connections closeGrace to send what they still
// have (a line already sent is still answered), waits for every handler to
// return and removes the folder. Close is idempotent. A leaf: it imports
// nothing of this module.
package linesock

import (
	"bufio"
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// maxLine is the longest request line a server reads.
const maxLine = 8 << 20

// closeGrace is how long Close lets an open connection go on reading.
const closeGrace = 2 * time.Second

// Handler answers one request line (without its newline) with one reply
// line (a newline is added). ctx ends when the server closes.
type Handler func(ctx context.Context, line []byte) (reply []byte)

// Server is one listening socket; see the package doc.
type Server struct {
	dir, path string
	ln        net.Listener
	handle    Handler
	deadline  time.Duration
	ctx       context.Context
	cancel    context.CancelFunc

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
	once  sync.Once
	err   error
}

// Listen starts a server whose folder name begins with prefix. deadline > 0
// bounds each connection's whole life (a stuck client cannot hold Close up
// for longer); 0 leaves connections open as long as the client wants.
func Listen(prefix string, deadline time.Duration, h Handler) (*Server, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	return listenIn(filepath.Join(dir, sockName), deadline, h)
}

// sockName is the socket's name inside its folder.
const sockName = "s.sock"

// FreshPath names a socket for ListenAt: s.sock in a folder under the temp
// dir whose name is prefix and 16 random characters (80 bits). Nothing is created, so
// a caller can hand the path out before anything listens.
func FreshPath(prefix string) string {
	return filepath.Join(os.TempDir(), prefix+rand.Text()[:16], sockName)
}

// ListenAt starts a server at path, a socket named by FreshPath: its folder
// is made now (0700) and must not exist yet, so nothing planted there is
// used. After Close the same path can be listened at again. deadline is as
// for Listen.
func ListenAt(path string, deadline time.Duration, h Handler) (*Server, error) {
	if err := os.Mkdir(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	return listenIn(path, deadline, h)
}

// listenIn listens at path, in a fresh private folder that it removes again
// when listening fails.
func listenIn(path string, deadline time.Duration, h Handler) (*Server, error) {
	dir := filepath.Dir(path)
	ln, err := net.Listen("unix", path)
	if err == nil {
		if err = os.Chmod(path, 0o600); err != nil {
			ln.Close()
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("socket: %w", err)
	}
	s := &Server{dir: dir, path: path, ln: ln, handle: h, deadline: deadline, conns: map[net.Conn]struct{}{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.wg.Add(1)
	go s.serve()
	return s, nil
}

// Path is the socket's path, for the client's environment.
func (s *Server) Path() string { return s.path }

func (s *Server) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		if !s.track(c) {
			c.Close()
			return
		}
		s.wg.Add(1)
		go s.conn(c)
	}
}

// track records an open connection; false once Close has begun.
func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns == nil {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) conn(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c) // a no-op once Close has begun (nil map)
		s.mu.Unlock()
		c.Close()
	}()
	if s.deadline > 0 {
		c.SetDeadline(time.Now().Add(s.deadline))
	}
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for sc.Scan() {
		reply := s.handle(s.ctx, append([]byte(nil), sc.Bytes()...))
		if _, err := c.Write(append(reply, '\n')); err != nil {
			return
		}
	}
}

// Close stops the server (see the package doc).
func (s *Server) Close() error {
	s.once.Do(func() {
		s.err = s.ln.Close()
		s.cancel()
		s.mu.Lock()
		for c := range s.conns {
			c.SetReadDeadline(time.Now().Add(closeGrace))
		}
		s.conns = nil
		s.mu.Unlock()
		s.wg.Wait()
		os.RemoveAll(s.dir)
	})
	return s.err
}
