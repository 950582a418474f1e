package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
)

// TestUIAddr: loopback addresses bind quietly, others warn; an unspecified
// address is printed as 127.0.0.1; only postgres URLs open a fleet page.
func TestUIAddr(t *testing.T) {
	for host, want := range map[string]bool{"127.0.0.1": true, "::1": true, "localhost": true, "0.0.0.0": false, "": false, "192.168.1.5": false} {
		if got := loopback(host); got != want {
			t.Errorf("loopback(%q) = %v, want %v", host, got, want)
		}
	}
	if got := shownAddr(&net.TCPAddr{IP: net.IPv4zero, Port: 8765}); got != "127.0.0.1:8765" {
		t.Errorf("shownAddr(0.0.0.0:8765) = %q", got)
	}
	for u, want := range map[string]bool{"postgres://x/y": true, "postgresql://x": true, "sqlite:///tmp/s.db": false, "/tmp/s.db": false, "": false} {
		if got := isPostgres(u); got != want {
			t.Errorf("isPostgres(%q) = %v", u, got)
		}
	}
}

// startUIInProcess runs `flower ui --addr addr` in process and returns the
// URL it printed, what it wrote on stderr by then, and a stop function.
func startUIInProcess(t *testing.T, addr string) (url, stderr string) {
	t.Helper()
	e, _, errb := testEnv("")
	r, w := io.Pipe()
	e.Stdout = w
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runUI(ctx, e, &uiOptions{Workspace: t.TempDir(), Addr: addr}) }()
	t.Cleanup(func() {
		cancel()
		r.Close()
		if err := <-done; err != nil {
			t.Errorf("runUI: %v", err)
		}
	})
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(strings.TrimPrefix(line, "flower ui: ")), errb.String()
}

// TestUIWarnsOffLoopback: --addr 0.0.0.0:0 prints a warning, the default
// does not (control); either way the printed URL answers with its token
// and refuses without it.
func TestUIWarnsOffLoopback(t *testing.T) {
	for _, tt := range []struct {
		addr string
		warn bool
	}{{"127.0.0.1:0", false}, {"0.0.0.0:0", true}} {
		u, stderr := startUIInProcess(t, tt.addr)
		if got := strings.Contains(stderr, "warning: --addr"); got != tt.warn {
			t.Errorf("--addr %s: warned %v, want %v (stderr %q)", tt.addr, got, tt.warn, stderr)
		}
		if !strings.HasPrefix(u, "http://127.0.0.1:") || !strings.Contains(u, "/?token=") {
			t.Fatalf("--addr %s printed %q", tt.addr, u)
		}
		for target, want := range map[string]int{u: http.StatusOK, strings.Split(u, "?")[0]: http.StatusForbidden} {
			jar, _ := cookiejar.New(nil) // a browser: the token becomes a cookie
			resp, err := (&http.Client{Jar: jar}).Get(target)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("GET %s: %d, want %d", target, resp.StatusCode, want)
			}
		}
	}
}
