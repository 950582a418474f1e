package child

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// ModeEnv, in the supervisor's environment (claude's, so harness.Options.Env
// or flower's own environment sets it), chooses how it finds the tree:
// unset for the platform's way (the subreaper on Linux, the portable
// tracker elsewhere), "portable" for the tracker everywhere (how Linux
// tests the macOS path), "subreaper" for Linux's. Any other value is
// refused.
const ModeEnv = "FLOWER_SUPERVISE"

// killTreeSignal asks the supervisor to kill the tree now and exit 137.
const killTreeSignal = syscall.SIGUSR1

// supervisorMode reads ModeEnv's value: whether the supervisor runs the
// portable tracker.
func supervisorMode(v string) (portable bool, err error) {
	switch v {
	case "":
		return !hasSubreaper, nil
	case "portable":
		return true, nil
	case "subreaper":
		if !hasSubreaper {
			return false, fmt.Errorf("%s=subreaper needs Linux (unset it)", ModeEnv)
		}
		return false, nil
	}
	return false, fmt.Errorf("%s=%q is not a mode (portable, subreaper, or unset)", ModeEnv, v)
}

// Supervise is the supervisor's main (flower-hook __supervise NAME ARGS…):
// it starts NAME in a process group of its own on its own streams and then,
// until NAME exits:
//   - SIGTERM, SIGINT, SIGHUP and SIGQUIT are passed on to NAME's group;
//   - the lifeline (fd 3, the read end of a pipe whose only write end
//     flower holds) reading EOF means flower is gone, however it died: the
//     whole tree is SIGKILLed and the supervisor exits 137;
//   - killTreeSignal (flower's SIGKILL of a portable supervisor, Signal)
//     does the same;
//   - with DeadlineEnv set, a deadline in that file passing unmoved does
//     the same (a queued flow's lease ran out).
//
// In the subreaper mode (Linux) it is the child subreaper of the tree,
// reaps the orphans reparented to it, gives NAME the death signal SIGKILL
// and finds the tree in /proc (KillTree). In the portable mode (ModeEnv) it
// uses none of these: a tracker lists the processes with ps while NAME
// lives and remembers the tree's process groups (see the package doc).
//
// Once NAME exits, what it left behind is killed and the supervisor ends as
// NAME ended (its exit code, or the same signal).
func Supervise(args []string, stderr io.Writer) int {
	fail := func(code int, msg string) int {
		fmt.Fprintf(stderr, "flower-hook %s: %s\n", SuperviseArg, msg)
		return code
	}
	if len(args) == 0 {
		return fail(2, "no command given")
	}
	portable, err := supervisorMode(os.Getenv(ModeEnv))
	if err != nil {
		return fail(2, err.Error())
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(lifelineFD, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return fail(2, "fd 3 is not a lifeline pipe (flower starts the supervisor itself)")
	}
	syscall.CloseOnExec(lifelineFD)
	var t *tracker
	if portable {
		t, err = newTracker(os.Getpid())
	} else {
		err = becomeSubreaper()
	}
	if err != nil {
		return fail(126, err.Error())
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, killTreeSignal)
	path, err := exec.LookPath(args[0])
	if err != nil {
		return fail(127, err.Error())
	}
	attr := &syscall.SysProcAttr{Setpgid: true}
	if !portable {
		setDeathSignal(attr)
	}
	p, err := os.StartProcess(path, args, &os.ProcAttr{Env: os.Environ(), Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}, Sys: attr})
	if err != nil {
		return fail(127, err.Error())
	}
	return superviseLoop(p.Pid, t, sigs)
}

// superviseLoop is Supervise once NAME (pid) runs: with a tracker t the
// portable mode, without one the subreaper mode.
func superviseLoop(pid int, t *tracker, sigs <-chan os.Signal) int {
	lost := make(chan struct{})
	go watchLifeline(lost)
	expired := make(chan struct{})
	if f := os.Getenv(DeadlineEnv); f != "" {
		go watchDeadline(f, expired)
	}
	exited := make(chan syscall.WaitStatus, 1)
	killTree := func() { KillTree(os.Getpid()) }
	var next <-chan time.Time
	every := snapshotFirst
	if t == nil {
		go reap(-1, pid, exited)
	} else {
		go reap(pid, pid, exited)
		killTree = func() { t.kill() }
		t.watch(every)
		next = time.After(every)
	}
	for {
		select {
		case s := <-sigs:
			if s == killTreeSignal {
				killTree()
				return 137
			}
			syscall.Kill(-pid, s.(syscall.Signal))
		case <-next:
			every = t.watch(every)
			next = time.After(every)
		case <-lost:
			killTree()
			return 137
		case <-expired:
			killTree()
			return 137
		case ws := <-exited:
			killTree()
			return endAs(ws)
		}
	}
}

// watchLifeline closes lost once the lifeline reads EOF (or fails).
func watchLifeline(lost chan<- struct{}) {
	f := os.NewFile(lifelineFD, "lifeline")
	buf := make([]byte, 64)
	for {
		if _, err := f.Read(buf); err != nil {
			close(lost)
			return
		}
	}
}

// reap waits for which (-1: every child, NAME and the orphans reparented
// to a subreaper; else that child only, which leaves the children exec
// waits for alone) and sends NAME's (pid's) status once.
func reap(which, pid int, exited chan<- syscall.WaitStatus) {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(which, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return
		}
		if got == pid {
			exited <- ws
		}
	}
}

// endAs is the supervisor's end for NAME's status: the same exit code, or
// the same signal (128+n should the signal not end it).
func endAs(ws syscall.WaitStatus) int {
	if !ws.Signaled() {
		return ws.ExitStatus()
	}
	sig := ws.Signal()
	signal.Reset(sig)
	syscall.Kill(os.Getpid(), sig)
	time.Sleep(time.Second) // the runtime ends the process on its own thread
	return 128 + int(sig)
}
