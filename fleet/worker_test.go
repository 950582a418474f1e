package fleet

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/flowerhq/flower/testkit/pgtest"
	"github.com/flowerhq/flower/testkit/testbed"
)

// dbProxy stands between a worker and the test's PostgreSQL (a unix
// socket): down cuts every connection and refuses new ones, as a database
// that went away; up lets them through again.
type dbProxy struct {
	t            *testing.T
	sock, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        []net.Conn
}

// proxied opens a database through a proxy and returns the proxy and
// the proxied URL.
func proxied(t *testing.T, raw string) (*dbProxy, string) {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	dir := t.TempDir()
	p := &dbProxy{t: t, sock: filepath.Join(dir, ".s.PGSQL.5432"), target: filepath.Join(q.Get("host"), ".s.PGSQL.5432")}
	q.Set("host", dir)
	u.RawQuery = q.Encode()
	p.up()
	t.Cleanup(p.down)
	return p, u.String()
}

func (p *dbProxy) up() {
	p.mu.Lock()
	defer p.mu.Unlock()
	ln, err := net.Listen("unix", p.sock)
	if err != nil {
		p.t.Fatal(err)
	}
	p.ln = ln
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			d, err := net.Dial("unix", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, d)
			p.mu.Unlock()
			go func() { io.Copy(d, c); d.Close() }()
			go func() { io.Copy(c, d); c.Close() }()
		}
	}()
}

func (p *dbProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	os.Remove(p.sock)
}

// TestWorkerSurvivesOutages: the database goes away mid-flow, once for
// less than --rescue-after and once until the flow is stopped at its
// lease's deadline. Short: the flow
// runs on and ends achieved on its first attempt, its end recorded once
// the database is back. Long: the flow is stopped at the lease's local
// deadline, the worker says it cannot reach the database, does not end,
// and once the database is back takes flows again: the stopped flow runs
// again to achieved and a new flow runs too; every attempt row is there.
// Control: the short outage's flow was running across it (it started
// before the cut and ended after).
func TestWorkerSurvivesOutages(t *testing.T) {
	for _, long := range []bool{false, true} {
		t.Run(map[bool]string{false: "shorter than rescue-after", true: "past rescue-after"}[long], func(t *testing.T) {
			outage(t, long)
		})
	}
}

func outage(t *testing.T, long bool) {
	const rescue = 2 * time.Second
	p, u := proxied(t, pgtest.URL(t))
	f, err := Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	started, release := make(chan struct{}, 4), make(chan struct{})
	var runs, stopped atomic.Int32
	runner := func(ctx context.Context, r *FlowRun) (Outcome, error) {
		runs.Add(1)
		started <- struct{}{}
		select {
		case <-release:
			return Outcome{Verdict: "achieved", CostUSD: 0.25}, nil
		case <-ctx.Done():
			stopped.Add(1)
			return Outcome{}, ctx.Err()
		}
	}
	o := WorkOptions{ID: "w1", RescueAfter: rescue, Runner: runner, SpoolDir: filepath.Join(t.TempDir(), "spool")}
	stop := workWith(t, f, o)
	defer stop()
	id := add(t, f, "through the outage")
	<-started
	p.down()
	cut := time.Now()
	if long {
		// The outage lasts until the lease's local deadline has stopped the
		// flow (past --rescue-after), awaited rather than slept through.
		if !testbed.Eventually(15*rescue, func() bool { return stopped.Load() == 1 }) {
			t.Fatalf("the flow ran on through an outage past its lease (stopped %d)", stopped.Load())
		}
	} else {
		// An outage shorter than --rescue-after is what this case tests: its
		// length is the point, so it is slept.
		time.Sleep(rescue / 2)
	}
	p.up()
	back := time.Now()
	if long {
		<-started // taken again once the database is back
	}
	close(release)
	testbed.Await(t, "the flow's end", func() bool { return state(t, f, id) == "completed" })
	j, _ := f.Get(context.Background(), id)
	if j.Verdict != "achieved" || j.CostUSD != 0.25 {
		t.Errorf("the flow's record after the outage: %+v", j)
	}
	if !long {
		if runs.Load() != 1 || j.Attempt != 1 || len(j.Attempts) != 1 {
			t.Errorf("a short outage made the flow run %d times: %+v", runs.Load(), j)
		}
		if s, e := j.Attempts[0].StartedAt, j.Attempts[0].EndedAt; s == "" || e == "" || cut.IsZero() || back.Before(cut) {
			t.Errorf("control: the attempt did not span the outage: %s .. %s", s, e)
		}
	} else if runs.Load() != 2 || len(j.Attempts) < 1 {
		t.Errorf("after the long outage: runs %d, %+v", runs.Load(), j)
	}
	id2 := add(t, f, "after the outage")
	testbed.Await(t, "a new flow after the outage", func() bool { return state(t, f, id2) == "completed" })
}

// TestNoFlowStartsBeforeTheLeaseIsSure: a flow River hands a worker whose
// database is back but whose lease keepLease has not renewed yet (the
// holder is down) is snoozed, not started: its lease's deadline may have
// passed in the outage, and a flow started then was stopped at once, after
// claude had named a session it never wrote (TestE2E_DatabaseOutage/10s).
// Control: the same job on a holder that is up runs.
func TestNoFlowStartsBeforeTheLeaseIsSure(t *testing.T) {
	f := open(t)
	for _, down := range []bool{true, false} {
		var runs atomic.Int32
		o := WorkOptions{ID: "w-sure", Runner: func(context.Context, *FlowRun) (Outcome, error) {
			runs.Add(1)
			return Outcome{}, errors.New("ran") // a verdict would complete a job River never handed out
		}, Logf: t.Logf, SpoolDir: filepath.Join(t.TempDir(), "spool")}
		if err := o.fill(); err != nil {
			t.Fatal(err)
		}
		h := newHolder(time.Minute, "", t.Logf)
		h.renewed(time.Now())
		h.down.Store(down)
		id := add(t, f, "after an outage")
		running(t, f, id, o.ID, 1)
		job := &river.Job[FlowArgs]{JobRow: &rivertype.JobRow{ID: id, Attempt: 1}, Args: FlowArgs{Ask: "after an outage"}}
		err := (&flowWorker{f: f, o: o, h: h}).Work(context.Background(), job)
		var snooze *rivertype.JobSnoozeError
		if down && (runs.Load() != 0 || !errors.As(err, &snooze)) {
			t.Errorf("down: the flow ran %d times, Work returned %v (want a snooze)", runs.Load(), err)
		}
		if !down && (runs.Load() != 1 || errors.As(err, &snooze)) {
			t.Errorf("control: up: the flow ran %d times, Work returned %v", runs.Load(), err)
		}
		h.close()
	}
}
