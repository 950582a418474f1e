package scripted

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
)

// Recorder is a recording proxy for the Messages API: claude's
// ANTHROPIC_BASE_URL points at it, it forwards every request to the
// upstream (a stream passes through as it arrives), and appends one
// exchange line per Messages call to the cassette. Credentials never reach
// the file: Authorization, X-Api-Key and cookie headers are not kept, and
// every credential value it knows — those headers' values and the
// ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN and CLAUDE_CODE_OAUTH_TOKEN of its
// environment — is replaced by "[redacted]" wherever it appears.
//
// Lifecycle: Record, point claude at URL(), Close (waits for nothing: an
// exchange is written when its response ends).
type Recorder struct {
	upstream *url.URL
	client   *http.Client
	ln       net.Listener
	srv      *http.Server

	mu      sync.Mutex
	out     *os.File
	secrets []string
	count   int
}

// credentialEnv are the variables whose values a recording never contains.
var credentialEnv = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"}

// credentialHeaders are never recorded; their values are redacted anywhere.
var credentialHeaders = []string{"Authorization", "X-Api-Key", "Proxy-Authorization", "Cookie", "Set-Cookie"}

// hopHeaders are connection-level headers a proxy does not forward.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Host", "Accept-Encoding", "Content-Length"}

// Record starts a recording proxy on addr that forwards to upstream (a base
// URL such as https://api.anthropic.com) and appends exchanges to out
// (created 0600 when missing).
func Record(upstream, out, addr string) (*Recorder, error) {
	u, err := url.Parse(upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("scripted: upstream %q is not an http(s) URL (e.g. https://api.anthropic.com)", upstream)
	}
	f, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("scripted: cassette: %w", err)
	}
	r := &Recorder{upstream: u, out: f, client: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}}
	for _, name := range credentialEnv {
		r.addSecret(os.Getenv(name))
	}
	if r.ln, r.srv, err = serveHTTP(addr, r); err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

// URL is the base URL to give claude as ANTHROPIC_BASE_URL.
func (r *Recorder) URL() string { return "http://" + r.ln.Addr().String() }

// Exchanges is how many exchanges were written so far.
func (r *Recorder) Exchanges() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count
}

// Close stops the proxy and closes the cassette.
func (r *Recorder) Close() error {
	err := r.srv.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.out != nil {
		if cerr := r.out.Close(); err == nil {
			err = cerr
		}
		r.out = nil
	}
	return err
}

// addSecret remembers a credential value to redact (short values, which
// could be ordinary words, are not credentials).
func (r *Recorder) addSecret(v string) {
	v = strings.TrimSpace(strings.TrimPrefix(v, "Bearer "))
	if len(v) < 6 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.secrets {
		if s == v {
			return
		}
	}
	r.secrets = append(r.secrets, v)
}

// ServeHTTP forwards one request and records it when it is a Messages call.
func (r *Recorder) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	body, err := io.ReadAll(io.LimitReader(hr.Body, 256<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "recording proxy: reading the request: "+err.Error())
		return
	}
	for _, h := range credentialHeaders {
		r.addSecret(hr.Header.Get(h))
	}
	target := *r.upstream
	target.Path = strings.TrimSuffix(r.upstream.Path, "/") + hr.URL.Path
	target.RawQuery = hr.URL.RawQuery
	up, err := http.NewRequestWithContext(hr.Context(), hr.Method, target.String(), bytes.NewReader(body))
	if err != nil {
		writeError(w, http.StatusBadGateway, "api_error", "recording proxy: "+err.Error())
		return
	}
	up.Header = hr.Header.Clone()
	for _, h := range hopHeaders {
		up.Header.Del(h)
	}
	resp, err := r.client.Do(up)
	if err != nil {
		writeError(w, http.StatusBadGateway, "api_error", "recording proxy: upstream "+r.upstream.Redacted()+": "+err.Error())
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		if !slices.Contains(hopHeaders, http.CanonicalHeaderKey(k)) {
			w.Header()[k] = vs
		}
	}
	w.WriteHeader(resp.StatusCode)
	got := passThrough(w, resp.Body)
	if hr.Method == http.MethodPost && strings.HasPrefix(strings.TrimSuffix(hr.URL.Path, "/"), "/v1/messages") &&
		!strings.HasSuffix(strings.TrimSuffix(hr.URL.Path, "/"), "/count_tokens") {
		r.write(exchangeOf(hr, body, resp, got))
	}
}

// passThrough copies the upstream body to w as it arrives, flushing each
// read, and returns everything it copied.
func passThrough(w http.ResponseWriter, body io.Reader) []byte {
	flusher, _ := w.(http.Flusher)
	var all bytes.Buffer
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			all.Write(buf[:n])
			w.Write(buf[:n])
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err != nil {
			return all.Bytes()
		}
	}
}

// exchangeOf builds the cassette line of one request and its response.
func exchangeOf(hr *http.Request, body []byte, resp *http.Response, got []byte) exchange {
	e := exchange{Key: RequestKey(body), Request: exchangeRequest{
		Method: hr.Method, Path: hr.URL.Path, Header: pick(hr.Header, requestHeaders), Body: asJSON(body),
	}}
	e.Response = exchangeResponse{Status: resp.StatusCode, Header: pick(resp.Header, responseHeaders)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		e.Response.Events = parseEvents(got)
	} else {
		e.Response.Body = asJSON(got)
	}
	return e
}

// write appends e to the cassette with every known credential redacted.
func (r *Recorder) write(e exchange) {
	line, err := json.Marshal(e)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.secrets {
		line = bytes.ReplaceAll(line, []byte(s), []byte("[redacted]"))
		if js, _ := json.Marshal(s); !bytes.Equal(js[1:len(js)-1], []byte(s)) {
			line = bytes.ReplaceAll(line, js[1:len(js)-1], []byte("[redacted]"))
		}
	}
	if r.out != nil {
		r.out.Write(append(line, '\n'))
		r.count++
	}
}

// parseEvents splits an SSE body into its events.
func parseEvents(b []byte) []Event {
	var out []Event
	var cur Event
	var data []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	emit := func() {
		if cur.Event != "" || len(data) > 0 {
			cur.Data = asJSON([]byte(strings.Join(data, "\n")))
			out = append(out, cur)
		}
		cur, data = Event{}, nil
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			emit()
		case strings.HasPrefix(line, "event:"):
			cur.Event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	emit()
	return out
}

// asJSON keeps b as is when it is JSON, else as a JSON string.
func asJSON(b []byte) json.RawMessage {
	if len(bytes.TrimSpace(b)) > 0 && json.Valid(b) {
		return append(json.RawMessage(nil), b...)
	}
	js, _ := json.Marshal(string(b))
	return js
}

// pick keeps the named headers that are set.
func pick(h http.Header, names []string) map[string]string {
	out := map[string]string{}
	for _, n := range names {
		if v := h.Get(n); v != "" {
			out[n] = v
		}
	}
	return out
}
