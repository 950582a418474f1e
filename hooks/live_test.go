package hooks

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"
)

// TestLiveReportsItsToken: `flower-hook live` answers {} and reports
// guards_live with the attempt's token and the session over the socket;
// without a socket (the control) it reports nothing and still answers {}.
func TestLiveReportsItsToken(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan liveReport, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		line, _ := bufio.NewReader(c).ReadBytes('\n')
		var r liveReport
		json.Unmarshal(line, &r)
		c.Write([]byte("{\"ok\":true}\n"))
		got <- r
	}()
	for _, withSock := range []bool{true, false} {
		env := map[string]string{LiveTokenEnv: "tok-1"}
		if withSock {
			env[SocketEnv] = sock
		}
		var out, errb bytes.Buffer
		code := Run([]string{GuardLive}, strings.NewReader(`{"hook_event_name":"SessionStart","session_id":"s-1","source":"startup"}`), &out, &errb, func(k string) string { return env[k] })
		if code != ExitOK || strings.TrimSpace(out.String()) != "{}" {
			t.Fatalf("exit %d, out %q, err %q", code, out.String(), errb.String())
		}
	}
	r := <-got
	if r.Kind != EventGuardsLive || r.Token != "tok-1" || r.SessionID != "s-1" || r.Source != "startup" {
		t.Fatalf("report %+v", r)
	}
}
