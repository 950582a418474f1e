package child

import "fmt"
import "io"
import "os"
import "os/exec"
import "os/signal"
import "syscall"
import "time"

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER.
const prSetChildSubreaper = 36

// Supervise is the supervisor's main (flower-hook __supervise NAME ARGS…):
// it becomes the child subreaper of everything it starts, starts NAME in a
// process group of its own (death signal SIGKILL) on its own streams, and
// then, until NAME exits:
//   - SIGTERM, SIGINT, SIGHUP and SIGQUIT are passed on to NAME's group;
//   - the lifeline (fd 3, the read end of a pipe whose only write end
//     flower holds) reading EOF means flower is gone, however it died: every
//     descendant is SIGKILLed and the supervisor exits 137;
//   - orphans of the tree, reparented to it, are reaped.
//
// Once NAME exits, what it left behind is killed and the supervisor ends as
// NAME ended (its exit code, or the same signal).
func Supervise(args []string, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "flower-hook "+SuperviseArg+": no command given")
		return 2
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(lifelineFD, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		fmt.Fprintln(stderr, "flower-hook "+SuperviseArg+": fd 3 is not a lifeline pipe (flower starts the supervisor itself)")
		return 2
	}
	syscall.CloseOnExec(lifelineFD)
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		fmt.Fprintf(stderr, "flower-hook %s: PR_SET_CHILD_SUBREAPER: %v\n", SuperviseArg, e)
		return 126
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	path, err := exec.LookPath(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "flower-hook %s: %v\n", SuperviseArg, err)
		return 127
	}
	p, err := os.StartProcess(path, args, &os.ProcAttr{Env: os.Environ(), Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		Sys: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}})
	if err != nil {
		fmt.Fprintf(stderr, "flower-hook %s: %v\n", SuperviseArg, err)
		return 127
	}
	lost := make(chan struct{})
	go watchLifeline(lost)
	exited := make(chan syscall.WaitStatus, 1)
	go reap(p.Pid, exited)
	self := os.Getpid()
	for {
		select {
		case s := <-sigs:
			syscall.Kill(-p.Pid, s.(syscall.Signal))
		case <-lost:
			KillTree(self)
			return 137
		case ws := <-exited:
			KillTree(self)
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

// reap waits for every child (NAME and the orphans reparented to the
// subreaper) and sends NAME's status once.
func reap(pid int, exited chan<- syscall.WaitStatus) {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
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
