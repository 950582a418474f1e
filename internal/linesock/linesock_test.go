package linesock

import (
	"bufio"
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func dial(t *testing.T, s *Server) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("unix", s.Path())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

func TestRoundTripAndPrivacy(t *testing.T) {
	s, err := Listen("linesock-test-", time.Minute, func(_ context.Context, line []byte) []byte {
		return append([]byte("got "), line...)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for path, want := range map[string]fs.FileMode{s.Path(): 0o600, filepath.Dir(s.Path()): 0o700} {
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, %v; want %v", path, st.Mode().Perm(), err, want)
		}
	}
	c, r := dial(t, s)
	c.Write([]byte("one\ntwo\n"))
	for _, want := range []string{"got one\n", "got two\n"} {
		if got, err := r.ReadString('\n'); got != want || err != nil {
			t.Errorf("reply %q, %v; want %q", got, err, want)
		}
	}
}

// TestCloseAnswersWhatWasSent: Close cancels a handler that waits and
// still sends its reply, waits for it, and removes the folder; a second
// Close is a no-op.
func TestCloseAnswersWhatWasSent(t *testing.T) {
	started := make(chan struct{})
	s, err := Listen("linesock-test-", 0, func(ctx context.Context, line []byte) []byte {
		close(started)
		<-ctx.Done()
		return []byte("cancelled " + string(line))
	})
	if err != nil {
		t.Fatal(err)
	}
	c, r := dial(t, s)
	c.Write([]byte("ask\n"))
	<-started
	closed := make(chan error)
	go func() { closed <- s.Close() }()
	if got, err := r.ReadString('\n'); got != "cancelled ask\n" || err != nil {
		t.Errorf("reply %q, %v; want the cancelled handler's reply", got, err)
	}
	c.Close()
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(s.Path())); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket folder left behind: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := net.Dial("unix", s.Path()); err == nil {
		t.Error("dialled a closed server")
	}
}

// TestDeadlineEndsAQuietClient: with a deadline, a client that never
// sends is cut off (the read ends); Close with an idle client open still
// returns.
func TestDeadlineEndsAQuietClient(t *testing.T) {
	s, err := Listen("linesock-test-", 50*time.Millisecond, func(_ context.Context, line []byte) []byte { return line })
	if err != nil {
		t.Fatal(err)
	}
	_, r := dial(t, s)
	if _, err := r.ReadString('\n'); err == nil {
		t.Error("a quiet client got a line")
	}
	_, _ = dial(t, s) // idle, open while Close runs
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// TestListenAt: FreshPath creates nothing; ListenAt serves there privately,
// Close removes the folder and the same path can be listened at again.
// Control: a folder planted at the path first is refused, not used.
func TestListenAt(t *testing.T) {
	echo := func(_ context.Context, line []byte) []byte { return line }
	path := FreshPath("linesock-test-")
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("FreshPath created %s: %v", filepath.Dir(path), err)
	}
	for round := range 2 {
		s, err := ListenAt(path, time.Minute, echo)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if st, err := os.Stat(filepath.Dir(path)); err != nil || st.Mode().Perm() != 0o700 || s.Path() != path {
			t.Errorf("round %d: folder %v, %v; path %s", round, st, err, s.Path())
		}
		c, r := dial(t, s)
		c.Write([]byte("hi\n"))
		if got, _ := r.ReadString('\n'); got != "hi\n" {
			t.Errorf("round %d: reply %q", round, got)
		}
		c.Close()
		s.Close()
		if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("round %d: Close left %s", round, filepath.Dir(path))
		}
	}
	planted := FreshPath("linesock-test-")
	if err := os.Mkdir(filepath.Dir(planted), 0o777); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(filepath.Dir(planted))
	if s, err := ListenAt(planted, time.Minute, echo); err == nil {
		s.Close()
		t.Error("ListenAt used a folder that was there before it")
	}
}
