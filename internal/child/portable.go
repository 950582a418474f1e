package child

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// psPaths are where the portable tracker looks for ps, in order (fixed
// paths, not PATH: the supervisor's environment is claude's).
var psPaths = []string{"/bin/ps", "/usr/bin/ps"}

// The portable supervisor lists the processes after each change at once,
// then less often while the tree stays the same: snapshotFirst doubling up
// to snapshotMost (a listing costs a fork of ps; BenchmarkTrackerSnapshot).
const (
	snapshotFirst = 100 * time.Millisecond
	snapshotMost  = time.Second
)

// groupGrace is how many listings in a row a process group may be missing
// from before the tracker forgets it: a group is dead once it has no member
// (its id may then be reused), but one listing (ps reads the process table
// entry by entry, not at one instant) can miss a member forking away.
const groupGrace = 2

// psRow is one process of a listing.
type psRow struct {
	pid, ppid, pgid int
	zombie          bool
}

// tracker finds a process tree without /proc, Pdeathsig or a subreaper:
// root's descendants by their parents in a ps listing, plus every process
// in a process group that held a member of the tree in a recent listing.
// An orphan is reparented to init and loses its chain of parents, but keeps
// its group, so the groups a tree had are how it is found again.
type tracker struct {
	root   int
	ps     string
	skip   map[int]bool // groups never signalled: root's, the caller's, the caller's parent's
	groups map[int]int  // group → listings since it last had a member
	known  [2]int       // count and pid sum of the last listing's members (a change speeds the listings up)
}

// newTracker prepares a tracker of root's tree; it fails when no ps is
// found at a fixed path.
func newTracker(root int) (*tracker, error) {
	t := &tracker{root: root, skip: map[int]bool{0: true, 1: true, syscall.Getpgrp(): true}, groups: map[int]int{}}
	for _, pid := range []int{root, os.Getppid()} {
		if g, err := syscall.Getpgid(pid); err == nil {
			t.skip[g] = true
		}
	}
	for _, p := range psPaths {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			t.ps = p
			return t, nil
		}
	}
	return nil, errors.New("no ps at " + strings.Join(psPaths, " or ") + " (the portable supervisor lists processes with it)")
}

// list runs ps once; the ps process itself is left out.
func (t *tracker) list() ([]psRow, error) {
	cmd := exec.Command(t.ps, "-A", "-o", "pid=,ppid=,pgid=,stat=")
	cmd.Env = []string{"LC_ALL=C"}
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	return parsePS(string(out), cmd.Process.Pid), nil
}

// parsePS reads `ps -o pid=,ppid=,pgid=,stat=` output, skipping lines of
// another shape and the process self.
func parsePS(out string, self int) []psRow {
	var rows []psRow
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 4 {
			continue
		}
		var n [3]int
		ok := true
		for i := range n {
			v, err := strconv.Atoi(f[i])
			n[i], ok = v, ok && err == nil && v >= 0
		}
		if ok && n[0] != self {
			rows = append(rows, psRow{pid: n[0], ppid: n[1], pgid: n[2], zombie: f[3][0] == 'Z'})
		}
	}
	return rows
}

// members are the rows of root's tree: root's descendants by parent, and
// the processes in the tracker's groups and their descendants; root and
// pids 0 and 1 never.
func (t *tracker) members(rows []psRow) []psRow {
	kids := map[int][]int{}
	byPID := map[int]psRow{}
	var queue []int
	for _, r := range rows {
		byPID[r.pid] = r
		kids[r.ppid] = append(kids[r.ppid], r.pid)
		if _, ok := t.groups[r.pgid]; ok && !t.skip[r.pgid] {
			queue = append(queue, r.pid)
		}
	}
	queue = append(queue, kids[t.root]...)
	seen := map[int]bool{0: true, 1: true, t.root: true}
	var out []psRow
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if r, ok := byPID[pid]; ok && !seen[pid] {
			seen[pid] = true
			out = append(out, r)
			queue = append(queue, kids[pid]...)
		}
	}
	return out
}

// snapshot lists the processes, returns the tree's members and remembers
// their groups (a failed listing returns none and forgets nothing).
func (t *tracker) snapshot() []psRow {
	rows, err := t.list()
	if err != nil {
		return nil
	}
	return t.update(rows)
}

// update is snapshot on a given listing: the members, their groups
// remembered, groups missing for more than groupGrace listings forgotten.
func (t *tracker) update(rows []psRow) []psRow {
	m := t.members(rows)
	for g := range t.groups {
		t.groups[g]++
	}
	for _, r := range m {
		if !t.skip[r.pgid] {
			t.groups[r.pgid] = 0
		}
	}
	for g, missed := range t.groups {
		if missed > groupGrace {
			delete(t.groups, g)
		}
	}
	return m
}

// watch is the tracker's snapshot while the tree lives; it returns how
// long to wait for the next one, shorter when the tree changed.
func (t *tracker) watch(last time.Duration) time.Duration {
	m := t.snapshot()
	seen := [2]int{len(m)}
	for _, r := range m {
		seen[1] += r.pid
	}
	if seen != t.known {
		t.known = seen
		return snapshotFirst
	}
	return min(2*last, snapshotMost)
}

// signalGroups sends sig to every remembered group.
func (t *tracker) signalGroups(sig syscall.Signal) {
	for g := range t.groups {
		if !t.skip[g] {
			syscall.Kill(-g, sig)
		}
	}
}

// kill ends the tree and reports how many processes it signalled. First it
// freezes it: SIGSTOP to every member and remembered group, listing after
// listing until one shows no member it has not stopped (a stopped process
// cannot fork, and its children keep it as their parent rather than being
// reparented to init before they were seen). Then SIGKILL to every group
// and member, round after round until a listing shows none alive. Both end
// after killTreeFor at the latest.
func (t *tracker) kill() int {
	deadline := time.Now().Add(killTreeFor)
	stopped := map[int]bool{}
	for fresh := true; fresh && time.Now().Before(deadline); {
		fresh = false
		for _, r := range t.snapshot() {
			if !r.zombie && !stopped[r.pid] {
				syscall.Kill(r.pid, syscall.SIGSTOP)
				stopped[r.pid], fresh = true, true
			}
		}
		t.signalGroups(syscall.SIGSTOP)
	}
	killed := map[int]bool{}
	for live := stopped; ; {
		t.signalGroups(syscall.SIGKILL)
		for pid := range live {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed[pid] = true
			}
		}
		live = map[int]bool{}
		for _, r := range t.snapshot() {
			if !r.zombie {
				live[r.pid] = true
			}
		}
		if len(live) == 0 || time.Now().After(deadline) {
			return len(killed)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
