package child

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// KillTree SIGKILLs every live descendant of root (not root itself), round
// after round, until a scan of /proc finds none alive or killTreeFor has
// passed, and reports how many it signalled. A round that finds no live
// descendant ends it: only a live process can fork, and a fork in flight is
// seen through its live parent, which the round kills (its children then
// show in the next round, below root when root is their subreaper).
func KillTree(root int) int {
	n := 0
	deadline := time.Now().Add(killTreeFor)
	for {
		live := Descendants(root)
		n += freezeThenKill(live, nil)
		if len(live) == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// freezeThenKill SIGSTOPs every pid, then SIGKILLs them, and reports how
// many it killed. Stopping them all first is what makes the order of the
// list harmless: killed one by one, a shell whose child (`sleep 8; touch
// MARKER`'s sleep) dies before the shell does runs its next command in
// between, when the killer is preempted on a loaded machine. A stopped
// process runs nothing, and a stopped child wakes no parent. between, when
// set, runs between the two passes' signals (a test widens the window).
func freezeThenKill(pids []int, between func()) int {
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGSTOP)
		if between != nil {
			between()
		}
	}
	n := 0
	for _, pid := range pids {
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			n++
		}
		if between != nil {
			between()
		}
	}
	return n
}

// Descendants lists the live (not zombie) processes whose chain of parents
// leads to root, root excluded, from one scan of /proc.
func Descendants(root int) []int {
	type st struct {
		ppid   int
		zombie bool
	}
	procs := map[int]st{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, state, ok := statOf(pid); ok {
			procs[pid] = st{ppid: ppid, zombie: state == 'Z' || state == 'X'}
		}
	}
	var out []int
	for pid, s := range procs {
		if s.zombie || pid == root {
			continue
		}
		for p, hops := s.ppid, 0; p > 1 && hops < 4096; hops++ {
			if p == root {
				out = append(out, pid)
				break
			}
			p = procs[p].ppid
		}
	}
	return out
}

// statOf reads a process's parent and state from /proc/<pid>/stat (the
// command name, in parentheses, may hold spaces and parentheses itself).
func statOf(pid int) (ppid int, state byte, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 || len(f[0]) == 0 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(f[1])
	return ppid, f[0][0], err == nil
}
