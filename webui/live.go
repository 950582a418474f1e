package webui

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
)

func (s *Server) liveRow(row harness.ManifestRow) bool { return Live(s.o.RunDir, row) }

// Live reports whether a run's flow is under way: a step is running, or
// the flow's channel pointer (in runDir) names a live process.
func Live(runDir string, row harness.ManifestRow) bool {
	if len(row.Running) > 0 {
		return true
	}
	b, err := os.ReadFile(filepath.Join(runDir, row.Run, flow.PointerFile))
	if err != nil {
		return false
	}
	var p struct {
		PID int `json:"pid"`
	}
	if json.Unmarshal(b, &p) != nil || p.PID <= 0 {
		return false
	}
	err = syscall.Kill(p.PID, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// statusLine is the current step's status, as the terminal's status line
// shows it: step, turns, cost, context, the last thing it said.
func statusLine(label func(string) string, events []harness.Event) string {
	var st harness.StepStats
	for _, ev := range events {
		st.Add(ev)
	}
	return statusOf(label, &st)
}

// statusOf is the status line of the step st folded.
func statusOf(label func(string) string, st *harness.StepStats) string {
	if st.Name == "" {
		return ""
	}
	state := "running"
	if st.Ended {
		state = "ended"
	}
	line := fmt.Sprintf("%s %s · %d turns · $%.4f · ctx %s", label(st.Name), state, st.Turns, st.CostUSD, tokens(st.Context))
	if st.LastText != "" {
		line += " · " + firstLine(st.LastText)
	}
	return line
}

// liveMsg is one server-sent event: what changed, and the status line.
type liveMsg struct {
	Kind   string `json:"kind"`
	Step   string `json:"step,omitempty"`
	Status string `json:"status"`
}

// live streams a run's events as server-sent events: one message for each
// new line of events.jsonl (the page then fetches its body again), within
// Poll of its write; when the flow is no longer under way it sends "end"
// and stops.
func (s *Server) live(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	row, ok := s.findRow(r, id)
	fl, canFlush := w.(http.Flusher)
	if !ok || !canFlush {
		http.Error(w, "flower ui: no such run", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	path := filepath.Join(s.o.RunDir, row.Run, "events.jsonl")
	var offset int64
	from := r.URL.Query().Get("from")
	if id := r.Header.Get("Last-Event-ID"); id != "" { // a reconnect goes on where it stopped
		from = id
	}
	if v, err := strconv.ParseInt(from, 10, 64); err == nil && v >= 0 {
		offset = v
	}
	var st harness.StepStats // folded as the events come: a long flow is not folded again per event
	if offset > 0 {          // the page shows the events before from: fold them for the status line, send none
		foldUpTo(path, offset, &st)
	}
	tick := time.NewTicker(s.o.Poll)
	defer tick.Stop()
	lastCheck := time.Now()
	for {
		evs, next := ReadFrom(path, offset)
		offset = next
		for _, ev := range evs {
			st.Add(ev)
			send(w, "", liveMsg{Kind: ev.Kind, Step: ev.Step, Status: statusOf(s.o.Reader.Label, &st)}, offset)
		}
		if len(evs) > 0 || time.Since(lastCheck) >= time.Second {
			lastCheck = time.Now()
			if row, ok = s.findRow(r, id); !ok || !s.liveRow(row) {
				if evs, _ := ReadFrom(path, offset); len(evs) == 0 { // nothing written after the flow ended
					send(w, "end", liveMsg{Kind: "end", Status: statusOf(s.o.Reader.Label, &st)}, offset)
					fl.Flush()
					return
				}
			}
		}
		fl.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}

// foldUpTo folds the events in the first n bytes of path into st.
func foldUpTo(path string, n int64, st *harness.StepStats) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, n))
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	for sc.Scan() {
		var ev harness.Event
		if json.Unmarshal(sc.Bytes(), &ev) == nil {
			st.Add(ev)
		}
	}
}

func send(w io.Writer, event string, m liveMsg, offset int64) {
	b, _ := json.Marshal(m)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "id: %d\ndata: %s\n\n", offset, b)
}

// ReadFrom reads the events on the whole lines of path after offset and
// the offset after them (a line still being written waits for its
// newline; a line that does not parse is skipped).
func ReadFrom(path string, offset int64) ([]harness.Event, int64) {
	f, err := os.Open(path)
	if err != nil {
		return nil, offset
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, offset
	}
	var out []harness.Event
	rd := bufio.NewReaderSize(f, 1<<16)
	for {
		line, err := rd.ReadBytes('\n')
		if err != nil { // EOF: a partial line is read again next time
			return out, offset
		}
		offset += int64(len(line))
		var ev harness.Event
		if json.Unmarshal(bytes.TrimSpace(line), &ev) == nil {
			out = append(out, ev)
		}
	}
}

// spill serves one spilled file of a run as text: only a file the run's
// spill events name, only from the spill folder of the run's workspace
// (os.Root refuses a name or link that leaves it).
func (s *Server) spill(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	row, ok := s.findRow(r, r.PathValue("id"))
	if !ok || name == "" || name != filepath.Base(name) || name == ".." || name == "." {
		http.Error(w, "flower ui: refused: not a spill of this run", http.StatusForbidden)
		return
	}
	events, _, _ := harness.ReadEvents(filepath.Join(s.o.RunDir, row.Run, "events.jsonl"))
	_, spills := s.o.Reader.Guards(events)
	if !slices.ContainsFunc(spills, func(sp Spill) bool { return filepath.Base(sp.Path) == name }) {
		http.Error(w, "flower ui: refused: not a spill of this run", http.StatusForbidden)
		return
	}
	root, err := os.OpenRoot(filepath.Join(row.Workspace, ".flower", "spill"))
	if err != nil {
		http.Error(w, "flower ui: the spill folder is gone", http.StatusNotFound)
		return
	}
	defer root.Close()
	f, err := root.Open(name)
	if err != nil {
		http.Error(w, "flower ui: refused: "+name+" is not in the run's spill folder", http.StatusForbidden)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.Copy(w, f)
}
