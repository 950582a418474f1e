package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/webui"
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

// BenchmarkUIRunsPage is `flower ui`'s runs page over a run dir of 1,000
// starter-flow runs, read as the command reads them (the manifest, each
// run's outcome from its verdicts), server time (issue 34: ≤ 300 ms).
func BenchmarkUIRunsPage(b *testing.B) {
	runDir := b.TempDir()
	var rows []harness.ManifestRow
	for i := range 1000 {
		st := 1.7e9 + float64(i)*60
		rows = append(rows, harness.ManifestRow{Run: fmt.Sprintf("r%04d", i), Workspace: "/ws", StartedAt: st, UpdatedAt: st + 30,
			Results: []harness.StepResult{
				{Step: flow.ClarifyStepName, OK: true, CostUSD: 0.01, Text: flowerbin.DemoBrief, StartedAt: st, EndedAt: st + 5},
				{Step: flow.GoalStepName, OK: true, CostUSD: 0.01, Text: flowerbin.DemoGoal, StartedAt: st + 5, EndedAt: st + 8},
				{Step: flow.WorkStepName, OK: true, CostUSD: 0.1, Text: "done", StartedAt: st + 8, EndedAt: st + 20},
				{Step: flow.WorkStepName + reviewSuffix + "#1", OK: true, CostUSD: 0.02, Text: flowerbin.DemoAchieved, StartedAt: st + 20, EndedAt: st + 30},
			}})
	}
	data, _ := json.Marshal(rows)
	os.WriteFile(filepath.Join(runDir, "manifest.json"), data, 0o600)
	srv, err := webui.New(webui.Options{RunDir: runDir, Reader: uiReader("", runDir, io.Discard, false), Token: "t"})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.AddCookie(&http.Cookie{Name: "flower_ui", Value: "t"})
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "r0999") {
			b.Fatalf("runs page: %d", w.Code)
		}
	}
}
