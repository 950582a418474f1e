package webui

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/flowerhq/flower/fleet"
	"github.com/flowerhq/flower/harness"
)

//go:embed assets
var assets embed.FS

// cookieName holds the token after the first visit.
const cookieName = "flower_ui"

// Reader is how the page reads runs: the same readings `flower runs`
// uses, injected by the command.
type Reader struct {
	// Rows are the runs: the run dir's manifest, or every run of the store.
	Rows func(ctx context.Context) ([]harness.ManifestRow, error)
	// Outcome is how a run ended (achieved, not yet, running, …).
	Outcome func(harness.ManifestRow) string
	// Guards are a run's denials and spills.
	Guards func([]harness.Event) ([]Denial, []Spill)
	// Label is a step's name as a person reads it ("review #1").
	Label func(step string) string
	// Verify checks a run's record has not been altered; nil checks
	// nothing. An error shows the run as tampered.
	Verify func(runDir, run string) error
	// Tell hands a message to the flow running in workspace (as flower
	// tell does) and says where it landed; nil: the page offers no tell.
	Tell func(ctx context.Context, workspace, msg string) (string, error)
}

// Queue is the fleet's queue (fleet.Fleet).
type Queue interface {
	List(ctx context.Context) ([]fleet.Job, error)
	Workers(ctx context.Context) ([]fleet.Worker, error)
	Cancel(ctx context.Context, id int64) (string, error)
	Retry(ctx context.Context, id int64) (string, error)
}

// Denial is one tool call a guard refused.
type Denial struct {
	Step, Guard, Tool, Agent, Reason string
}

// Spill is one long output the spill guard moved into the workbench.
type Spill struct {
	Step, Tool, Path string
	Bytes            int64 // -1: gone
}

// Options configure a Server.
type Options struct {
	RunDir string // the run dir whose events and step files the page reads
	Store  string // shown on the page ("" without --store)
	Reader Reader
	Queue  Queue  // nil: no fleet page
	Token  string // "" makes a random one
	// Poll is how often a live page's stream looks for new events
	// (default 200 ms).
	Poll time.Duration
}

// Server is the web UI's handler.
type Server struct {
	o     Options
	token string
	tmpl  *template.Template
	mux   *http.ServeMux
	mu    sync.Mutex
	sums  map[summaryKey]runSummary
}

// New builds the server.
func New(o Options) (*Server, error) {
	if o.Reader.Rows == nil || o.Reader.Outcome == nil {
		return nil, errors.New("webui: Reader.Rows and Reader.Outcome are required")
	}
	if o.Reader.Label == nil {
		o.Reader.Label = func(s string) string { return s }
	}
	if o.Reader.Guards == nil {
		o.Reader.Guards = func([]harness.Event) ([]Denial, []Spill) { return nil, nil }
	}
	if o.Poll <= 0 {
		o.Poll = 200 * time.Millisecond
	}
	s := &Server{o: o, token: o.Token, sums: map[summaryKey]runSummary{}}
	if s.token == "" {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("webui: token: %w", err)
		}
		s.token = hex.EncodeToString(b)
	}
	t, err := template.New("").Funcs(funcs).ParseFS(assets, "assets/*.html")
	if err != nil {
		return nil, fmt.Errorf("webui: templates: %w", err)
	}
	s.tmpl = t
	s.routes()
	return s, nil
}

// Token is the secret every request needs.
func (s *Server) Token() string { return s.token }

// URL is the address to open: base (http://host:port) with the token.
func (s *Server) URL(base string) string { return base + "/?token=" + url.QueryEscape(s.token) }

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /{$}", s.runsPage)
	s.mux.HandleFunc("GET /run/{id}", s.runPage("run.html"))
	s.mux.HandleFunc("GET /run/{id}/body", s.runPage("runbody"))
	s.mux.HandleFunc("GET /run/{id}/live", s.live)
	s.mux.HandleFunc("GET /run/{id}/spill/{name}", s.spill)
	s.mux.HandleFunc("GET /fleet", s.fleetPage)
	s.mux.HandleFunc("POST /fleet/{id}/{op}", s.fleetAction)
	s.mux.HandleFunc("POST /run/{id}/tell", s.tell)
}

// ServeHTTP checks the token (and for a POST the Origin), sets the
// security headers and routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin") // no-referrer would make a browser send "Origin: null" with the page's own POSTs
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	if q := r.URL.Query().Get("token"); q != "" && s.valid(q) && r.Method == http.MethodGet {
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		u := *r.URL
		v := u.Query()
		v.Del("token")
		u.RawQuery = v.Encode()
		http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther) // the token leaves the address bar and history
		return
	}
	c, err := r.Cookie(cookieName)
	if err != nil || !s.valid(c.Value) {
		http.Error(w, "flower ui: no valid token: open the URL `flower ui` printed (it carries ?token=…)", http.StatusForbidden)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && !sameOrigin(r) {
		http.Error(w, "flower ui: refused: the request's Origin is not this page", http.StatusForbidden)
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) valid(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) == 1
}

// sameOrigin reports whether a state-changing request comes from this
// page: its Origin (or, without one, its Referer) names this host.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		o = r.Header.Get("Referer")
	}
	u, err := url.Parse(o)
	return err == nil && o != "" && u.Scheme == "http" && u.Host == r.Host
}

// render writes template name with data, or a 500 naming what failed.
func (s *Server) render(w http.ResponseWriter, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := s.tmpl.ExecuteTemplate(w, name, data); err != nil {
		http.Error(w, "flower ui: "+err.Error(), http.StatusInternalServerError)
	}
}

// page is what every page's frame shows.
type page struct {
	Title  string
	Fleet  bool
	Store  string
	RunDir string
}

func (s *Server) frame(title string) page {
	return page{Title: title, Fleet: s.o.Queue != nil, Store: s.o.Store, RunDir: s.o.RunDir}
}
