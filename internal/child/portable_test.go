package child

import (
	"os"
	"os/exec"
	"reflect"
	"slices"
	"testing"
)

func TestParsePS(t *testing.T) {
	out := "    1     0     1 Ss\n" +
		"  100     1   100 S+\n" +
		"  101   100   101 Z\n" +
		"  102   100   101 R+\n" + // the ps process itself: left out
		"PID PPID PGID STAT\n" + // a header: not numbers
		"  103   100\n" + // too short
		"  104   100   104 S extra\n" + // too long
		"  -5   100   100 S\n" + // negative
		"\n"
	got := parsePS(out, 102)
	want := []psRow{{pid: 1, ppid: 0, pgid: 1}, {pid: 100, ppid: 1, pgid: 100}, {pid: 101, ppid: 100, pgid: 101, zombie: true}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parsePS = %+v, want %+v", got, want)
	}
}

// pids are the pids of rows, sorted.
func pids(rows []psRow) []int {
	var out []int
	for _, r := range rows {
		out = append(out, r.pid)
	}
	slices.Sort(out)
	return out
}

// TestTracker_Update replays listings of a tree under root 100 (skipped
// groups 0, 1 and 50, the caller's) and checks the members of each.
func TestTracker_Update(t *testing.T) {
	tree := []psRow{
		{pid: 1, ppid: 0, pgid: 1},
		{pid: 50, ppid: 1, pgid: 50}, // the caller (flower)
		{pid: 100, ppid: 50, pgid: 100},
		{pid: 101, ppid: 100, pgid: 101}, // claude
		{pid: 102, ppid: 101, pgid: 102}, // a tool in a group of its own
		{pid: 103, ppid: 102, pgid: 102}, // its child
		{pid: 104, ppid: 101, pgid: 50},  // a child that joined the caller's group
		{pid: 200, ppid: 1, pgid: 200},   // unrelated
		{pid: 201, ppid: 50, pgid: 50},   // unrelated, in the caller's group
		{pid: 202, ppid: 1, pgid: 202},   // unrelated
	}
	cases := []struct {
		name string
		rows []psRow
		want []int
	}{
		{"the tree by parents", tree, []int{101, 102, 103, 104}},
		// 102 exits: 103 is reparented to init, found by its group.
		{"an orphan in a seen group", []psRow{tree[0], tree[1], tree[2], tree[3], {pid: 103, ppid: 1, pgid: 102}, tree[6], tree[7], tree[8]},
			[]int{101, 103, 104}},
		// 103 had left for a group never listed (setsid, then its parent
		// died) between two listings: the tracker cannot know it.
		{"an orphan in an unseen group", []psRow{tree[0], tree[1], tree[2], tree[3], {pid: 103, ppid: 1, pgid: 103}},
			[]int{101}},
		{"group 102 missing: 1", []psRow{tree[2], tree[3]}, []int{101}},
		{"group 102 missing: 2", []psRow{tree[2], tree[3]}, []int{101}},
		// Gone for longer than groupGrace listings, group 102 is forgotten:
		// a new process that got the id is not the tree's.
		{"a reused group id", []psRow{tree[2], tree[3], {pid: 102, ppid: 1, pgid: 102}}, []int{101}},
		// The caller's group is never remembered, even with a member in it.
		{"the caller's group", []psRow{tree[1], tree[2], tree[8], {pid: 104, ppid: 1, pgid: 50}}, nil},
	}
	tr := &tracker{root: 100, skip: map[int]bool{0: true, 1: true, 50: true}, groups: map[int]int{}}
	for _, c := range cases {
		if got := pids(tr.update(c.rows)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: members %v, want %v (groups %v)", c.name, got, c.want, tr.groups)
		}
	}
}

func TestSupervisorMode(t *testing.T) {
	for _, c := range []struct {
		v        string
		portable bool
		ok       bool
	}{
		{"", !hasSubreaper, true},
		{"portable", true, true},
		{"subreaper", false, hasSubreaper},
		{"Portable", false, false},
		{"portable ", false, false},
		{"1", false, false},
	} {
		portable, err := supervisorMode(c.v)
		if (err == nil) != c.ok || (err == nil && portable != c.portable) {
			t.Errorf("supervisorMode(%q) = %v, %v; want portable %v, ok %v", c.v, portable, err, c.portable, c.ok)
		}
	}
}

// BenchmarkTrackerSnapshot is the cost of one listing of the portable
// supervisor (a fork of ps and its parse).
func BenchmarkTrackerSnapshot(b *testing.B) {
	tr, err := newTracker(os.Getpid())
	if err != nil {
		b.Skip(err)
	}
	for b.Loop() {
		tr.snapshot()
	}
}

func TestPortableSupervisor(t *testing.T) {
	sup := []string{"flower-hook", SuperviseArg, "claude"}
	for _, c := range []struct {
		name string
		args []string
		env  []string
		want bool
	}{
		{"portable", sup, []string{"A=1", ModeEnv + "=portable"}, true},
		{"the last one counts", sup, []string{ModeEnv + "=portable", ModeEnv + "=bogus"}, false},
		{"unset", sup, []string{"A=1"}, !hasSubreaper},
		{"not a supervisor", []string{"claude", "-p"}, []string{ModeEnv + "=portable"}, false},
		{"a prefix only", sup, []string{ModeEnv + "X=portable"}, !hasSubreaper},
	} {
		if got := portableSupervisor(&exec.Cmd{Args: c.args, Env: c.env}); got != c.want {
			t.Errorf("%s: portableSupervisor = %v, want %v", c.name, got, c.want)
		}
	}
}
