package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/sessionstore"
	"github.com/flowerhq/flower/testkit/flowerbin"
)

// TestE2E_FlowDocumentsTravel: machine A (its own HOME, run dir and
// workspace path) runs a plain flow with --store and --flow X to achieved;
// machine B, a fresh empty workspace at another path, runs `flower continue
// --flow X` and wakes with A's brief, Q&A log and frozen goal — on disk,
// and in what B's coordinator and judge were sent — resuming A's
// coordinator session, with no clarify or goal request of its own (each
// goal carries a generation number, so a re-derived goal would show).
// Machine C, a third fresh checkout, wakes it with a new sentence (appended
// to A's brief, the goal derived anew). Control: without --flow, B has
// nothing to continue (exit 2, no request).
func TestE2E_FlowDocumentsTravel(t *testing.T) {
	t.Parallel()
	var gen atomic.Int32
	fb := newFleetBedWith(t, func() *scripted.Script {
		s := fleetScript(func(scripted.Request) int { return 0 })
		for i := range s.Conversations {
			switch c := &s.Conversations[i]; c.Name {
			case "goal":
				c.Func = func(r scripted.Request) scripted.Reply {
					return flowerbin.TypedGoal(fmt.Sprintf("## 目标\n%s 完成 GEN-%d\n## 检查清单\n- ok.txt 存在", flowMarker.FindString(r.Text()), gen.Add(1)))
				}
			case "clarify": // one question first, so the flow has a Q&A log
				c.Replies = []scripted.Reply{{ToolUse: &scripted.Block{Name: "mcp__flower__ask", Input: []byte(`{"question":"COLOUR-Q?"}`)}}}
			}
		}
		return s
	})
	a, b := fb.machine("a"), fb.machine("b")
	wsA, wsB := filepath.Join(a.root, "checkout"), filepath.Join(b.root, "elsewhere", "checkout")
	for _, d := range []string{wsA, wsB} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	common := func(m *fleetMachine, ws string) []string {
		return []string{"--no-self-test", "--timeout", "0", "-C", ws, "--run-dir", m.runDir, "--store", fb.store}
	}
	answers := filepath.Join(t.TempDir(), "answers.txt")
	if err := os.WriteFile(answers, []byte("COLOUR-A\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errA, code := fb.flower(a, append(common(a, wsA), "--flow", "X", "--answers", answers, "FLOW-7 写 ok.txt")...)
	if code != 0 {
		t.Fatalf("machine A: exit %d\n%s\n%s", code, out, errA)
	}
	notesA := filepath.Join(wsA, ".flower", "notes")
	goalA, err := os.ReadFile(filepath.Join(notesA, flowGoalName))
	if err != nil || !strings.Contains(string(goalA), "FLOW-7 完成 GEN-1") {
		t.Fatalf("machine A's goal: %v %q", err, goalA)
	}
	if qa, err := os.ReadFile(filepath.Join(notesA, flow.DefaultLogName)); err != nil || !strings.Contains(string(qa), "COLOUR-A") {
		t.Fatalf("machine A's Q&A log: %v %q", err, qa)
	}

	before, clarifyA := len(fb.bed.Model.Requests()), len(fb.bed.Model.RequestsFor("clarify"))
	out, errB, code := fb.flower(b, append(common(b, wsB), "continue")...)
	if code != 2 || !strings.Contains(errB, "nothing to continue") || len(fb.bed.Model.Requests()) != before {
		t.Fatalf("control: B without --flow: exit %d, %d new requests\n%s\n%s", code, len(fb.bed.Model.Requests())-before, out, errB)
	}
	out, errB, code = fb.flower(b, append(common(b, wsB), "continue", "--flow", "X")...)
	if code != 0 || !strings.Contains(errB, "flow X: brought") {
		t.Fatalf("machine B: exit %d\n%s\n%s", code, out, errB)
	}
	names := []string{flowBriefName, flowGoalName, flow.DefaultLogName}
	filepath.WalkDir(notesA, func(p string, d os.DirEntry, err error) error { // and whatever else A's notes hold (handoffs)
		if rel, _ := filepath.Rel(notesA, p); err == nil && d.Type().IsRegular() && !slices.Contains(names, rel) && !strings.HasPrefix(d.Name(), ".") {
			names = append(names, rel)
		}
		return nil
	})
	t.Logf("A's notes: %v", names)
	for _, name := range names {
		want, err1 := os.ReadFile(filepath.Join(notesA, name))
		got, err2 := os.ReadFile(filepath.Join(wsB, ".flower", "notes", name))
		if err1 != nil || err2 != nil || string(got) != string(want) {
			t.Errorf("B's %s is not A's (%v, %v):\n%s\n---\n%s", name, err1, err2, want, got)
		}
	}
	if info, err := os.Stat(filepath.Join(wsB, ".flower", "notes", flowBriefName)); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("B's brief: %v %v (want 0600)", err, info)
	}
	if n := gen.Load(); n != 1 {
		t.Errorf("%d goal requests, want A's one: B must judge against A's frozen goal, not derive its own", n)
	}
	if n := len(fb.bed.Model.RequestsFor("clarify")); n != clarifyA {
		t.Errorf("%d clarify requests, want A's %d: B woke with A's brief", n, clarifyA)
	}
	checkWokeWith(t, fb, wsB, string(goalA))

	// A document only an earlier flow wrote (a handoff, say), planted in the
	// store: C's wake brings it (the control for D's --new).
	stale := "notes/STALE-HANDOFF.md"
	putDoc(t, fb.store, "X", stale, "from an earlier flow")

	// Machine C, another fresh checkout, wakes it with a new sentence: A's
	// brief with the sentence appended, and a goal derived anew from it.
	c := fb.machine("c")
	wsC := filepath.Join(c.root, "third")
	os.MkdirAll(wsC, 0o700)
	out, errC, code := fb.flower(c, append(common(c, wsC), "--flow", "X", "FLOW-7 and NEW-WORDS too")...)
	brief, _ := os.ReadFile(filepath.Join(wsC, ".flower", "notes", flowBriefName))
	if code != 0 || !strings.Contains(string(brief), "NEW-WORDS") || !strings.Contains(string(brief), "FLOW-7: 写 ok.txt") || gen.Load() != 2 {
		t.Fatalf("machine C: exit %d, %d goals, brief:\n%s\n%s\n%s", code, gen.Load(), brief, out, errC)
	}
	if _, err := os.Stat(filepath.Join(wsC, ".flower", filepath.FromSlash(stale))); err != nil {
		t.Fatalf("control: C's wake did not bring the stored %s: %v", stale, err)
	}

	// Machine D starts flow X over (--new): the store forgets what it kept,
	// so the stale document reaches neither D nor a later continue on E.
	d, e := fb.machine("d"), fb.machine("e")
	wsD, wsE := filepath.Join(d.root, "fourth"), filepath.Join(e.root, "fifth")
	os.MkdirAll(wsD, 0o700)
	os.MkdirAll(wsE, 0o700)
	out, errD, code := fb.flower(d, append(common(d, wsD), "--new", "--flow", "X", "FLOW-9 写 ok.txt")...)
	if code != 0 || !strings.Contains(errD, "--new: forgot the") {
		t.Fatalf("machine D: exit %d\n%s\n%s", code, out, errD)
	}
	out, errE, code := fb.flower(e, append(common(e, wsE), "continue", "--flow", "X")...)
	briefE, _ := os.ReadFile(filepath.Join(wsE, ".flower", "notes", flowBriefName))
	if code != 0 || !strings.Contains(string(briefE), "FLOW-9") || strings.Contains(string(briefE), "FLOW-7") {
		t.Fatalf("machine E: exit %d, brief (want D's, not A's):\n%s\n%s\n%s", code, briefE, out, errE)
	}
	for _, ws := range []string{wsD, wsE} {
		if _, err := os.Stat(filepath.Join(ws, ".flower", filepath.FromSlash(stale))); err == nil {
			t.Errorf("%s got the earlier flow's %s after --new", ws, stale)
		}
	}
}

// putDoc puts one document of flow into the store at url.
func putDoc(t *testing.T, url, flowName, name, body string) {
	t.Helper()
	st, err := sessionstore.OpenURL(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.PutDocuments(context.Background(), flowName, []sessionstore.Document{{Name: name, Body: []byte(body)}}); err != nil {
		t.Fatal(err)
	}
}

// checkWokeWith: the last coordinator and judge requests, B's, carry the
// goal A froze, and B's coordinator resumed A's session.
func checkWokeWith(t *testing.T, fb *fleetBed, wsB, goal string) {
	t.Helper()
	coord := fb.bed.Model.RequestsFor("coordinator")
	judge := fb.bed.Model.RequestsFor("judge")
	if len(coord) < 2 || len(judge) < 2 {
		t.Fatalf("%d coordinator and %d judge requests, want A's and B's", len(coord), len(judge))
	}
	first, last := coord[0], coord[len(coord)-1]
	frozen := strings.TrimSpace(strings.SplitN(goal, "\n", 3)[1])
	if !strings.Contains(last.Text(), wsB) || !strings.Contains(last.Text(), frozen) {
		t.Errorf("B's coordinator request lacks B's workspace or A's goal %q: %.1500s", frozen, last.Text())
	}
	if last.Session != first.Session {
		t.Errorf("B's coordinator session %q is not A's %q", last.Session, first.Session)
	}
	if j := judge[len(judge)-1]; !strings.Contains(j.Text(), frozen) {
		t.Errorf("B's judge was not given A's frozen goal %q: %.1500s", frozen, j.Text())
	}
}
