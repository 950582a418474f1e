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
// leader) only; a tool that claude started and that outlives claude is
// killed by the group signal on every path flower itself controls.
package child

import "context"
import "os/exec"
import "syscall"
import "time"

// WaitDelay is how long Wait waits for the output pipes after the child
// exited or was cancelled.
const WaitDelay = 2 * time.Second

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

// Signal sends sig to cmd's whole process group (a started Command or
// Terminal child leads its group). It is a no-op before Start.
func Signal(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, sig)
	if err == syscall.ESRCH {
		return nil
	}
	return err
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
