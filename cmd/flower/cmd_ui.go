package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/fleet"
	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/internal/child"
	"github.com/flowerhq/flower/internal/redact"
	"github.com/flowerhq/flower/webui"
)

// uiOptions are the options of `flower ui`.
type uiOptions struct {
	Workspace, RunDir, Store, Addr string
	Open                           bool
	Args                           []string
}

func newUICmd(e *cmdEnv) *cli.Command {
	o := &uiOptions{}
	return &cli.Command{
		Name:  "ui",
		Usage: "a local web page of the runs, one run's timeline followed live, and the fleet's queue",
		Description: `Serves a page from this binary until stopped (Ctrl-C) and prints its URL with
a random token: open that URL (the token becomes a cookie). It binds 127.0.0.1
on a free port; from another machine, forward it over ssh:
   ssh -L 8765:127.0.0.1:8765 host 'flower ui --addr 127.0.0.1:8765 -C ~/src/app'
With --store postgres://… it lists every machine's runs and the fleet's queue
(cancel and re-queue). docs/ui.md has the details and the security rules.

Examples:
   flower ui                       # the runs of this workspace
   flower ui -C ~/src/app --open
   flower ui --store "$FLOWER_STORE"`,
		Flags: []cli.Flag{workspaceFlag(&o.Workspace, wsUsageRuns), runDirFlag(&o.RunDir), storeFlag(&o.Store),
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:0", Usage: "listen `ADDR` (port 0 picks a free one; anything but loopback is reachable by others)", EnvVars: []string{"FLOWER_UI_ADDR"}, Destination: &o.Addr},
			&cli.BoolFlag{Name: "open", Usage: "open the page in the desktop's browser (xdg-open or open)", EnvVars: []string{"FLOWER_UI_OPEN"}, Destination: &o.Open}},
		Action: func(c *cli.Context) error {
			o.Args = c.Args().Slice()
			return e.do(o, func() error { return runUI(c.Context, e, o) })
		},
	}
}

func runUI(ctx context.Context, e *cmdEnv, o *uiOptions) error {
	if len(o.Args) > 0 {
		return usagef("ui takes no arguments, got %q (-C DIR names the workspace)", o.Args[0])
	}
	pl, err := resolvePlace(o.Workspace, o.RunDir)
	if err != nil {
		return err
	}
	opts := webui.Options{RunDir: pl.RunDir, Store: o.Store, Reader: uiReader(o.Store, pl.RunDir, e.Stderr, chineseLocale(e.Getenv))}
	if isPostgres(o.Store) {
		f, err := fleet.Open(ctx, o.Store)
		if err != nil {
			return err
		}
		defer f.Close()
		opts.Queue, opts.Store = f, f.URL()
	}
	srv, err := webui.New(opts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return usagef("--addr %s: %v", o.Addr, err)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()
	if host, _, _ := net.SplitHostPort(o.Addr); !loopback(host) {
		fmt.Fprintf(e.Stderr, "flower: warning: --addr %s is reachable from other machines; the token is all that guards it (ssh -L to a 127.0.0.1 address is safer)\n", o.Addr)
	}
	url := srv.URL("http://" + shownAddr(ln.Addr().(*net.TCPAddr)))
	// The token is the one secret flower prints on purpose: past the
	// redaction of stdout (its shape is a token=… a rule would take).
	fmt.Fprintf(redact.Underlying(e.Stdout), "flower ui: %s\n", url)
	if o.Open {
		openBrowser(ctx, url, e.Stderr)
	}
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	hs.Shutdown(sctx)
	return nil
}

// uiReader gives the page the readings `flower runs` uses.
func uiReader(store, runDir string, warn io.Writer, zh bool) webui.Reader {
	var cache manifestCache
	return webui.Reader{
		Rows: func(ctx context.Context) ([]harness.ManifestRow, error) {
			if store == "" {
				return cache.read(ctx, runDir, warn)
			}
			rows, _, err := manifestRows(ctx, store, runDir, warn)
			return rows, err
		},
		Outcome: func(r harness.ManifestRow) string { o, _ := runOutcome(r); return o },
		Guards: func(events []harness.Event) ([]webui.Denial, []webui.Spill) {
			ds, ss := guardRecords(events)
			denials, spills := make([]webui.Denial, len(ds)), make([]webui.Spill, len(ss))
			for i, d := range ds {
				denials[i] = webui.Denial{Step: d.Step, Guard: d.Guard, Tool: d.Tool, Agent: d.Agent, Reason: d.Reason}
			}
			for i, s := range ss {
				spills[i] = webui.Spill{Step: s.Step, Tool: s.Tool, Path: s.Path, Bytes: s.Bytes}
			}
			return denials, spills
		},
		Label: func(step string) string { return stepLabel(step, zh) },
		Tell: func(ctx context.Context, workspace, msg string) (string, error) {
			rc, err := flow.Tell(ctx, runDir, workspace, msg)
			return rc.Step, err
		},
		// A run whose record flower did not write as it stands (the events'
		// hash chain, the manifest row's seal) is shown as altered.
		Verify: func(runDir, run string) error {
			if s := harness.RecordCheck(runDir, run); s != "" {
				return errors.New(s)
			}
			return nil
		},
	}
}

// manifestCache keeps the run dir's rows while manifest.json stays the
// same file (size and time), so a page of 1,000 runs does not parse them
// all again; rows with a step under way are read afresh each time (their
// flower may have died: manifestRows marks them).
type manifestCache struct {
	mu    sync.Mutex
	stamp string
	rows  []harness.ManifestRow
}

func (c *manifestCache) read(ctx context.Context, runDir string, warn io.Writer) ([]harness.ManifestRow, error) {
	stamp := ""
	if st, err := os.Stat(filepath.Join(runDir, "manifest.json")); err == nil {
		stamp = fmt.Sprint(st.Size(), st.ModTime().UnixNano())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if stamp != "" && stamp == c.stamp {
		return c.rows, nil
	}
	rows, _, err := manifestRows(ctx, "", runDir, warn)
	if err == nil && !anyRunning(rows) {
		c.stamp, c.rows = stamp, rows
	} else {
		c.stamp = ""
	}
	return rows, err
}

func isPostgres(u string) bool {
	return strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://")
}

func loopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

// shownAddr is the address to print: an unspecified one (0.0.0.0, ::) as
// 127.0.0.1, which always reaches it from this machine.
func shownAddr(a *net.TCPAddr) string {
	if a.IP.IsUnspecified() {
		return fmt.Sprintf("127.0.0.1:%d", a.Port)
	}
	return a.String()
}

// openBrowser starts the desktop's opener on url and does not wait for
// the browser; failing, it says so and the printed URL remains.
func openBrowser(ctx context.Context, url string, warn io.Writer) {
	for _, opener := range []string{"xdg-open", "open"} {
		cmd := child.Command(ctx, opener, url)
		if cmd.Start() == nil {
			go cmd.Wait()
			return
		}
	}
	fmt.Fprintln(warn, "flower: --open: no xdg-open or open here; open the URL above in a browser")
}
