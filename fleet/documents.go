package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/internal/atomicfile"
	"github.com/flowerhq/flower/sessionstore"
)

// lineageDoc is the name under which a flow's lineage (step → session ids,
// oldest first) is kept among its documents.
const lineageDoc = "lineage.json"

// maxDocBytes bounds one document; a larger file in notes/ stays local.
const maxDocBytes = 4 << 20

// lineageSteps are the starter's steps whose sessions travel.
var lineageSteps = []string{flow.ClarifyStepName, flow.GoalStepName, flow.WorkStepName}

// Documents keeps one flow's documents — every file under its workbench's
// notes/ (brief, goal, Q&A log, handoffs) and its lineage — in a session
// store, and puts them back into a workspace that lacks them. Safe for
// concurrent use.
type Documents struct {
	st   *sessionstore.Store
	flow string
	wb   *harness.Workbench
	lin  *flow.Lineage

	mu   sync.Mutex
	sent map[string][]byte // what the store holds, as last put or read
	// frozen is the goal its goal step froze (freeze), kept under goalDoc in
	// place of the goal file: a coder's Bash can rewrite the file, and a
	// takeover must judge against what was frozen, not what is on disk.
	frozen            []byte
	goalDoc, briefDoc string
}

// NewDocuments is the documents of flowName in wb and lin, kept in st.
func NewDocuments(st *sessionstore.Store, flowName string, wb *harness.Workbench, lin *flow.Lineage) *Documents {
	notes := filepath.ToSlash(mustRel(wb.Root(), wb.Notes()))
	return &Documents{st: st, flow: flowName, wb: wb, lin: lin, sent: map[string][]byte{},
		goalDoc: path.Join(notes, flow.DefaultGoalName), briefDoc: path.Join(notes, flow.DefaultBriefName)}
}

// StoredBrief reports whether the store holds a complete brief for the
// flow: a workspace without one can continue it once Restore ran.
func (d *Documents) StoredBrief(ctx context.Context) (bool, error) {
	docs, err := d.st.Documents(ctx, d.flow)
	if err != nil {
		return false, err
	}
	for _, doc := range docs {
		if doc.Name == d.briefDoc {
			return flow.ParseBrief(string(doc.Body)).Complete(), nil
		}
	}
	return false, nil
}

func mustRel(base, target string) string {
	if rel, err := filepath.Rel(base, target); err == nil {
		return rel
	}
	return "notes"
}

// freeze records the goal the goal step froze (its goal event's text): it
// is what the store keeps as the flow's goal from now on, whatever the goal
// file on disk says.
func (d *Documents) freeze(text string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.frozen = []byte(text)
}

// HasFrozenGoal reports whether Restore brought a frozen goal: the flow can
// go on with it (flow.StarterOptions.FrozenGoal).
func (d *Documents) HasFrozenGoal() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.frozen != nil
}

// Restore writes every stored document the workspace lacks: notes files
// that are missing (0600, folders 0700), and lineage sessions the run dir
// does not remember. It returns the names it restored.
func (d *Documents) Restore(ctx context.Context) ([]string, error) {
	docs, err := d.st.Documents(ctx, d.flow)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var restored []string
	for _, doc := range docs {
		d.sent[doc.Name] = doc.Body
		if doc.Name == lineageDoc {
			n, err := d.restoreLineage(doc.Body)
			if err != nil {
				return restored, err
			}
			if n > 0 {
				restored = append(restored, doc.Name)
			}
			continue
		}
		file := filepath.Join(d.wb.Root(), filepath.FromSlash(doc.Name))
		if doc.Name == d.goalDoc {
			d.frozen = doc.Body // the frozen goal replaces whatever the file holds
		} else if _, err := os.Lstat(file); err == nil {
			continue // the workspace's own copy wins
		}
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			return restored, fmt.Errorf("fleet: restore %s: %w", doc.Name, err)
		}
		if err := atomicfile.Write(file, doc.Body, 0o600); err != nil {
			return restored, fmt.Errorf("fleet: restore %s: %w", doc.Name, err)
		}
		restored = append(restored, doc.Name)
	}
	return restored, nil
}

func (d *Documents) restoreLineage(body []byte) (int, error) {
	var steps map[string][]string
	if err := json.Unmarshal(body, &steps); err != nil {
		return 0, fmt.Errorf("fleet: restore the lineage of %s: %w", d.flow, err)
	}
	n := 0
	for _, step := range lineageSteps {
		have := d.lin.History(step)
		for _, id := range steps[step] {
			if slices.Contains(have, id) {
				continue
			}
			if err := d.lin.Remember(step, id); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// Forget deletes the flow's stored documents (flower --new starts the flow
// over) and returns how many there were; save then starts from nothing.
func (d *Documents) Forget(ctx context.Context) (int64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	n, err := d.st.DeleteDocuments(ctx, d.flow)
	if err != nil {
		return 0, err
	}
	d.sent, d.frozen = map[string][]byte{}, nil
	return n, nil
}

// save puts every document that changed since the last save (or Restore)
// into the store, in one transaction.
func (d *Documents) save(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var changed []sessionstore.Document
	for name, body := range d.collect() {
		if prev, ok := d.sent[name]; !ok || !bytes.Equal(prev, body) {
			changed = append(changed, sessionstore.Document{Name: name, Body: body})
		}
	}
	if len(changed) == 0 {
		return nil
	}
	if err := d.st.PutDocuments(ctx, d.flow, changed); err != nil {
		return err
	}
	for _, c := range changed {
		d.sent[c.Name] = c.Body
	}
	return nil
}

// collect reads the documents as they are on disk now.
func (d *Documents) collect() map[string][]byte {
	out := map[string][]byte{}
	root := d.wb.Root()
	_ = filepath.WalkDir(d.wb.Notes(), func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			return nil
		}
		if info, err := e.Info(); err != nil || info.Size() > maxDocBytes {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if b, rerr := os.ReadFile(p); err == nil && rerr == nil {
			out[filepath.ToSlash(rel)] = b
		}
		return nil
	})
	delete(out, d.goalDoc) // the file may be forged: only a frozen goal is kept
	if d.frozen != nil {
		out[d.goalDoc] = d.frozen
	}
	steps := map[string][]string{}
	for _, s := range lineageSteps {
		if h := d.lin.History(s); len(h) > 0 {
			steps[s] = h
		}
	}
	if len(steps) > 0 {
		if b, err := json.Marshal(steps); err == nil {
			out[lineageDoc] = b
		}
	}
	return out
}

// Watch keeps the documents current while a flow runs: onEvent and
// stepDone are the run's hooks — the goal its goal step froze is recorded
// (freeze), and a frozen goal, a new session, a tool call or a step's end is
// saved at once — and a Keep every interval runs until stop, which saves
// once more and waits. Errors go to logf.
func (d *Documents) Watch(ctx context.Context, interval time.Duration, logf func(string, ...any)) (onEvent func(harness.Event), stepDone func(flow.Step, harness.StepResult), stop func()) {
	save := func() {
		if err := d.save(context.WithoutCancel(ctx)); err != nil {
			logf("documents of %s: %v", d.flow, err)
		}
	}
	onEvent = func(ev harness.Event) {
		if g, ok := ev.Goal(); ok && g.State == harness.GoalFrozen {
			d.freeze(g.Text)
			save()
		}
		if ev.Kind == harness.EventInit || ev.Kind == harness.EventToolUse || ev.Kind == harness.EventStep {
			save() // a new session in the lineage, a turn in it: keep it before anything else can happen
		}
	}
	kctx, cancel := context.WithCancel(ctx)
	kept := make(chan struct{})
	go func() { defer close(kept); d.Keep(kctx, interval, logf) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-kept }) }
	return onEvent, func(flow.Step, harness.StepResult) { save() }, stop
}

// Keep saves every interval until ctx ends, then once more: a worker that
// dies mid-step leaves the session it started in the store's lineage.
// Errors go to logf.
func (d *Documents) Keep(ctx context.Context, interval time.Duration, logf func(string, ...any)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if err := d.save(context.WithoutCancel(ctx)); err != nil {
				logf("documents of %s: %v", d.flow, err)
			}
			return
		case <-t.C:
			if err := d.save(ctx); err != nil && ctx.Err() == nil {
				logf("documents of %s: %v", d.flow, err)
			}
		}
	}
}
