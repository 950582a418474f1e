package webui

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/flowerhq/flower/fleet"
)

// jobView is one queued flow on the fleet page.
type jobView struct {
	fleet.Job
	Lease     string // the worker's lease expiry
	DeadWhy   string // a dead-lettered (discarded) job's last error
	CanCancel bool
	CanRetry  bool
}

// fleetData is the fleet page.
type fleetData struct {
	page
	Jobs    []jobView
	Workers []fleet.Worker
	Msg     string
	Err     string
}

func (s *Server) fleetPage(w http.ResponseWriter, r *http.Request) {
	if s.o.Queue == nil {
		http.Error(w, "flower ui: no fleet here: start flower ui with --store postgres://…", http.StatusNotFound)
		return
	}
	d := fleetData{page: s.frame("Fleet"), Msg: r.URL.Query().Get("msg")}
	jobs, err := s.o.Queue.List(r.Context())
	if err != nil {
		d.Err = err.Error()
	}
	workers, err := s.o.Queue.Workers(r.Context())
	if err != nil && d.Err == "" {
		d.Err = err.Error()
	}
	d.Workers = workers
	leases := map[string]string{}
	for _, wk := range workers {
		leases[wk.ID] = wk.ExpiresAt
	}
	for i := len(jobs) - 1; i >= 0; i-- { // newest first
		j := jobs[i]
		v := jobView{Job: j, Lease: leases[j.Worker]}
		switch j.State {
		case "discarded":
			if n := len(j.Errors); n > 0 {
				v.DeadWhy = j.Errors[n-1]
			} else {
				v.DeadWhy = j.Error
			}
			v.CanRetry = true
		case "cancelled", "completed":
			v.CanRetry = true
		default:
			v.CanCancel = true
		}
		d.Jobs = append(d.Jobs, v)
	}
	s.render(w, "fleet.html", d)
}

// fleetAction cancels or re-queues a job (POST, token and Origin checked
// by ServeHTTP) and goes back to the fleet page with what happened.
func (s *Server) fleetAction(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if s.o.Queue == nil || err != nil || id <= 0 {
		http.Error(w, "flower ui: no such job", http.StatusNotFound)
		return
	}
	var state string
	switch r.PathValue("op") {
	case "cancel":
		state, err = s.o.Queue.Cancel(r.Context(), id)
	case "retry":
		state, err = s.o.Queue.Retry(r.Context(), id)
	default:
		http.Error(w, "flower ui: the fleet page cancels and re-queues, nothing else", http.StatusNotFound)
		return
	}
	msg := "job " + strconv.FormatInt(id, 10) + ": " + state
	if err != nil {
		msg = "job " + strconv.FormatInt(id, 10) + ": " + err.Error()
	}
	http.Redirect(w, r, "/fleet?msg="+url.QueryEscape(msg), http.StatusSeeOther)
}
