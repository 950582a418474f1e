// Package flowtest runs the tests of your own workflows against a recorded
// model: no API key in CI, no script to write by hand.
//
// Lifecycle, per test: Cassette(t, "testdata/NAME.cassette") returns a Model;
// give Model.Env to harness.Options.Env (it points claude at the model, with a
// HOME of its own) and run the workflow as usual; the test's cleanup stops the
// model. With the cassette present the model replays it (scripted.ServeCassette):
// a request that was not recorded fails the test, naming the closest recorded
// request and the first difference. With FLOWER_RECORD=1 and a key
// (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN or CLAUDE_CODE_OAUTH_TOKEN) the
// model is a recording proxy (scripted.Record) to FLOWER_RECORD_UPSTREAM,
// else ANTHROPIC_BASE_URL, else https://api.anthropic.com, and the cassette is
// written when the test passes (a failed test leaves the old one alone).
// Without either, the test fails with the command that records it.
package flowtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowerhq/flower/internal/envlist"
	"github.com/flowerhq/flower/scripted"
)

// RecordEnv is the variable that switches Cassette to recording.
const RecordEnv = "FLOWER_RECORD"

// UpstreamEnv overrides the API a recording forwards to.
const UpstreamEnv = "FLOWER_RECORD_UPSTREAM"

// credentials are the variables that can carry a key for recording.
var credentials = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"}

// Model is the model one test runs against.
type Model struct {
	// URL is the model's base URL (claude's ANTHROPIC_BASE_URL).
	URL string
	// Env is the environment for claude: the process environment without
	// anything that would reach a real account or server, a temporary HOME,
	// ANTHROPIC_BASE_URL=URL, and, when recording, the key.
	Env []string
	// Recording is true when the model records rather than replays.
	Recording bool

	server   *scripted.Server
	recorder *scripted.Recorder
}

// Requests is how many Messages requests the model has answered so far
// (replayed or recorded).
func (m *Model) Requests() int {
	if m.recorder != nil {
		return m.recorder.Exchanges()
	}
	n := 0
	for _, r := range m.server.Requests() {
		if strings.TrimSuffix(r.Path, "/") == "/v1/messages" {
			n++
		}
	}
	return n
}

// Cassette returns the model for the calling test: a replay of path when it
// exists, a recording into path when FLOWER_RECORD=1 and a key is set.
func Cassette(t testing.TB, path string) *Model {
	t.Helper()
	home := t.TempDir()
	if os.Getenv(RecordEnv) == "1" {
		return record(t, path, home)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("flowtest: no cassette at %s; record it once with a key: %s=1 ANTHROPIC_API_KEY=… go test -run '^%s$' (%v)",
			path, RecordEnv, t.Name(), err)
		return nil
	}
	srv, err := scripted.ServeCassette(path, "127.0.0.1:0")
	if err != nil {
		t.Fatalf("flowtest: %v", err)
		return nil
	}
	m := &Model{URL: srv.URL(), server: srv}
	m.Env = scripted.OfflineEnv(os.Environ(), home, m.URL)
	t.Cleanup(func() {
		srv.Close()
		for _, r := range srv.Requests() {
			if r.Error != "" {
				t.Errorf("flowtest: a request was not in the cassette (re-record with %s=1 if the workflow changed on purpose): %s", RecordEnv, r.Error)
				return
			}
		}
	})
	return m
}

// record starts a recording proxy whose cassette replaces path when the
// test passes.
func record(t testing.TB, path, home string) *Model {
	t.Helper()
	var creds []string
	for _, name := range credentials {
		if v := os.Getenv(name); v != "" {
			creds = append(creds, name+"="+v)
		}
	}
	if len(creds) == 0 {
		t.Fatalf("flowtest: %s=1 records %s from the real API and needs a key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN)", RecordEnv, path)
		return nil
	}
	upstream := firstSet(os.Getenv(UpstreamEnv), os.Getenv("ANTHROPIC_BASE_URL"), "https://api.anthropic.com")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatalf("flowtest: %v", err)
	}
	partial := path + ".recording"
	os.Remove(partial)
	rec, err := scripted.Record(upstream, partial, "127.0.0.1:0")
	if err != nil {
		t.Fatalf("flowtest: %v", err)
		return nil
	}
	m := &Model{URL: rec.URL(), Recording: true, recorder: rec}
	m.Env = append(envlist.Unset(scripted.OfflineEnv(os.Environ(), home, m.URL), "ANTHROPIC_API_KEY"), creds...)
	t.Cleanup(func() {
		rec.Close()
		if t.Failed() {
			os.Remove(partial)
			t.Logf("flowtest: the test failed, so %s was not written", path)
			return
		}
		if err := os.Rename(partial, path); err != nil {
			t.Errorf("flowtest: %v", err)
			return
		}
		t.Logf("flowtest: recorded %d exchanges into %s", rec.Exchanges(), path)
	})
	return m
}

func firstSet(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// String names the mode, for logs.
func (m *Model) String() string {
	if m.Recording {
		return fmt.Sprintf("recording proxy at %s", m.URL)
	}
	return fmt.Sprintf("cassette replay at %s", m.URL)
}
