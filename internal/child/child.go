// Package child is the one constructor of the child processes flower
// starts and waits for: claude for a step, claude --version for the doctor,
// claude in the end-to-end test bed. Nothing it starts outlives flower.
//
// Lifecycle of a child: Command returns an *exec.Cmd in its own process
// group (so the tools it spawns are signalled with it), with the death
// signal SIGKILL on Linux (the kernel kills it when flower dies, kill -9 and
// the OOM killer included), a Cancel that kills the whole group when the
// context ends, and a WaitDelay after which Wait stops waiting for output a
// grandchild still holds. Wait joins the readers exec starts for non-file
// Stdout/Stderr writers, so a stderr tail read after Wait is complete.
//
// Terminal is the documented variant for a child that owns a terminal (the
// `flower claude` drop-in): creack/pty makes it a session leader, which is
// its own process group already, so Setpgid stays off.
//
// The death signal follows the thread that started the child: Go keeps
// that thread alive for the process's lifetime unless a goroutine locked to
// it exits, which flower never does. It reaches the child (the group
// leader) only, and claude starts its tools in process groups of their own,
// so neither it nor a group signal reaches every tool.
//
// Supervised is the variant for a step's claude, whose whole tree must die
// with flower: flower-hook __supervise (Supervise) sits between flower and
// claude. The supervisor is not killed with flower: its lifeline is a pipe
// whose only write end flower holds, and the kernel closes that end
// whenever flower ends, SIGKILL and the OOM killer included (no signal
// needed, so this holds on every unix). It reads EOF, SIGKILLs the tree and
// exits. While flower lives, Signal's SIGKILL kills the tree from flower's
// side (KillTree) before it kills the supervisor (portable mode: below).
//
// How the supervisor finds the tree is its mode (ModeEnv). On Linux it is
// the child subreaper of the tree: every process claude starts is then its
// descendant for as long as it lives (an orphan is reparented to the
// nearest subreaper, not to init), so /proc names the whole tree, and
// KillTree kills it until /proc shows none alive.
//
// The portable mode, the default off Linux (macOS has neither Pdeathsig nor
// subreapers nor /proc) and selectable on Linux for its tests, finds it
// with `ps -A -o pid=,ppid=,pgid=,stat=` (a tracker): root's descendants by
// parent, plus every process in a process group that held a member of the
// tree in a recent listing. It lists while claude lives, 100 ms after each
// change and up to a second apart while the tree stays the same, because
// an orphan is reparented to init (launchd) and loses its chain of parents
// but keeps its group: the groups seen are how it is found again. A group
// with no member for a few listings is forgotten (it is dead, and its id
// may be reused). To kill, the tracker first freezes the tree (SIGSTOP to
// every member and group, listing after listing until nothing new shows:
// a stopped process cannot fork, and its children stay its children), then
// SIGKILLs every member and group until a listing shows none alive. It
// never signals its own group, the group of flower, or that of flower's
// parent. What it cannot catch: a process that leaves its group (setsid or
// setpgid) and whose parent dies (a double fork) between two listings,
// before any listing saw it in its new group; it is then an orphan of
// init in a group the tracker never saw. While flower lives, Signal's
// SIGKILL of a portable supervisor asks it (SIGUSR1) to kill the tree, since
// only it knows the groups, and SIGKILLs it should it still run later.
package child

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// WaitDelay is how long Wait waits for the output pipes after the child
// exited or was cancelled.
const WaitDelay = 2 * time.Second

// killTreeFor bounds KillTree and the portable kill: a process stuck in the
// kernel (state D) takes SIGKILL only once it leaves there, and the killer
// goes on after this.
const killTreeFor = 2 * time.Second

// Command prepares name with args as a contained child: own process group,
// death signal, group-killing Cancel, WaitDelay. ctx may be
// context.Background() when the caller ends the child itself.
func Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
	cmd.Cancel = func() error { return Signal(cmd, syscall.SIGKILL) }
	cmd.WaitDelay = WaitDelay
	return cmd
}

// Terminal is Command for a child that gets a terminal from pty.Start: the
// same death signal, Cancel and WaitDelay, without Setpgid (pty.Start sets
// Setsid and Setctty, and a session leader is its own process group).
func Terminal(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	setDeathSignal(cmd.SysProcAttr)
	cmd.Cancel = func() error { return Signal(cmd, syscall.SIGKILL) }
	cmd.WaitDelay = WaitDelay
	return cmd
}

// SuperviseArg, as flower-hook's first argument, makes it the supervisor
// of one command (Supervise).
const SuperviseArg = "__supervise"

// lifelineFD is the supervisor's lifeline (ExtraFiles[0]).
const lifelineFD = 3

// Supervised is Command for a child whose whole tree must die with flower:
// supervisor (the flower-hook binary) runs name with args and kills its
// tree when flower dies (see Supervise). The caller gives it a lifeline
// (Lifeline) before Start.
func Supervised(supervisor, name string, args ...string) *exec.Cmd {
	cmd := Command(context.Background(), supervisor, append([]string{SuperviseArg, name}, args...)...)
	// No death signal: the supervisor outlives flower to kill the tree.
	clearDeathSignal(cmd.SysProcAttr)
	return cmd
}

// Lifeline gives a Supervised cmd its lifeline pipe: r goes to the child as
// fd 3 and is the caller's to close once the child started; w is the only
// write end, which the caller holds until the child was waited for. When w
// closes (flower exits or is killed: the kernel closes it), the supervisor
// kills the tree.
func Lifeline(cmd *exec.Cmd) (r, w *os.File, err error) {
	if r, w, err = os.Pipe(); err != nil {
		return nil, nil, err
	}
	cmd.ExtraFiles = []*os.File{r}
	return r, w, nil
}

// Signal sends sig to cmd's whole process group (a started Command or
// Terminal child leads its group). It is a no-op before Start. SIGKILL of a
// child not yet waited for first kills every descendant (KillTree): tools
// that left the group, and a supervisor's whole tree, which the group signal
// alone would orphan. A supervisor in the portable mode is instead sent
// killTreeSignal, and SIGKILL should it still run killTreeFor and a second
// later.
func Signal(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	if sig == syscall.SIGKILL && cmd.ProcessState == nil {
		if portableSupervisor(cmd) {
			// Only the supervisor knows the groups of the tree's orphans:
			// it kills the tree and exits, or is killed after the bound.
			syscall.Kill(cmd.Process.Pid, killTreeSignal)
			time.AfterFunc(killTreeFor+time.Second, func() { cmd.Process.Signal(syscall.SIGKILL) })
			return nil
		}
		KillTree(cmd.Process.Pid)
	}
	err := syscall.Kill(-cmd.Process.Pid, sig)
	if err == syscall.ESRCH {
		return nil
	}
	return err
}

// portableSupervisor reports whether cmd is a Supervised command whose
// supervisor runs in the portable mode (by ModeEnv in its environment).
func portableSupervisor(cmd *exec.Cmd) bool {
	if len(cmd.Args) < 2 || cmd.Args[1] != SuperviseArg {
		return false
	}
	env, mode := cmd.Env, ""
	if env == nil {
		env = os.Environ()
	}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, ModeEnv+"="); ok {
			mode = v // the last one counts, as for the child
		}
	}
	portable, err := supervisorMode(mode)
	return portable && err == nil
}

// Exit describes how a waited-for child ended: its exit code, or -1 and the
// signal's name. Before the child was waited for it reports -1 and "".
func Exit(cmd *exec.Cmd) (code int, signal string) {
	ps := cmd.ProcessState
	if ps == nil {
		return -1, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, ws.Signal().String()
	}
	return ps.ExitCode(), ""
}
