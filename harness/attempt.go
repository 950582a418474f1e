package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/flowerhq/flower/hooks"
	"github.com/flowerhq/flower/internal/envlist"
)

// attemptArgs are the per-attempt inputs of one claude process.
type attemptArgs struct {
	spec     AgentSpec
	prompt   string
	step     string
	resume   string
	fork     bool
	resumeAt string
	own      bool        // resume is the flow's own session (RunOptions.ResumeOwn)
	emit     func(Event) // nil: record nothing (the handoff round)
	warned   *bool
	handoff  HandoffPolicy
	spawned  func() // claude started (nil: not told)
}

// stepDirName makes a step name safe as a directory name.
func stepDirName(step string) string {
	s := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 {
			return '_'
		}
		return r
	}, step)
	if s == "" || s == "." || s == ".." {
		s = "step"
	}
	return s
}

// childEnv is the environment of one claude process.
func (r *Runtime) childEnv(step string, extra map[string]string) []string {
	env := envlist.Unset(r.env, "CLAUDECODE")
	env = envlist.Set(env, "CLAUDE_CODE_ENTRYPOINT", "sdk-go")
	if r.opts.CLIRetries >= 0 {
		env = envlist.Set(env, "CLAUDE_CODE_MAX_RETRIES", strconv.Itoa(r.opts.CLIRetries))
	}
	env = envlist.Set(env, "FLOWER_SOCKET", r.sock.Path())
	env = envlist.Set(env, hooks.ServerEnv, hookServerPID())
	env = envlist.Set(env, "FLOWER_RUN", r.run)
	env = envlist.Set(env, "FLOWER_STEP", step)
	if r.configDir != "" {
		env = envlist.Set(env, "CLAUDE_CONFIG_DIR", r.configDir)
		env = envlist.Set(env, "CLAUDE_CODE_PROJECT_DIR_NAME", r.project)
	}
	for k, v := range extra {
		env = envlist.Set(env, k, v)
	}
	return env
}

// prepareAttempt compiles the attempt's argv and step files (in the step's
// folder) and, for a resume, loads the session from the store into the
// config dir first (loadResume: a session that cannot be loaded starts
// fresh); done removes what the attempt needed only while it ran.
func (r *Runtime) prepareAttempt(ctx context.Context, a *attemptArgs) (built Built, done func(), err error) {
	dir := filepath.Join(r.runDir, r.run, stepDirName(a.step))
	if err := privateDir(dir); err != nil {
		return Built{}, nil, fmt.Errorf("step dir: %w", err)
	}
	pins, err := CheckAuthority(r.workspace, envlist.Getter(r.env), r.trusted)
	if err != nil {
		return Built{}, nil, err
	}
	env, done, err := r.loadResume(ctx, a, dir)
	if err != nil {
		return Built{}, nil, err
	}
	bo := BuildOptions{
		Cwd: r.workspace, Resume: a.resume, Fork: a.fork, ResumeAt: a.resumeAt,
		Workbench: r.opts.Workbench, SpillThreshold: r.opts.SpillThreshold, HookPath: r.hook,
		SessionMirror: r.store != nil, RunDir: r.runDir, AllowDirs: r.allowDirs, Sandbox: r.opts.Sandbox,
		PartialMessages: r.opts.Resilience.idle() > 0,
		SettingsPath:    filepath.Join(dir, "settings.json"), MCPPath: filepath.Join(dir, "mcp.json"),
		Authority: true, Pins: pins, StartInstructions: r.startMD,
	}
	if wb := r.opts.Workbench; wb != nil && wb.External() {
		// Outside the workspace (isolate, a run-dir workbench): claude
		// grants writes there only for an --add-dir (the fence has it as a
		// root already).
		bo.AddDirs = append(bo.AddDirs, wb.Root())
	}
	if st, err := os.Stat(r.opts.PluginDir); r.opts.PluginDir != "" && err == nil && st.IsDir() {
		bo.PluginDir = r.opts.PluginDir
	}
	if built, err = BuildArgs(a.spec, bo); err != nil {
		done()
		return Built{}, nil, err
	}
	if err := writeStepFiles(dir, built); err != nil {
		done()
		return Built{}, nil, err
	}
	if len(env) > 0 && built.Env == nil {
		built.Env = map[string]string{}
	}
	for k, v := range env {
		built.Env[k] = v
	}
	return built, done, nil
}

// attempt runs one claude process to its end.
func (r *Runtime) attempt(ctx context.Context, a attemptArgs) attemptOut {
	built, done, err := r.prepareAttempt(ctx, &a)
	if err != nil {
		return attemptOut{err: &StartError{Reason: err.Error()}}
	}
	defer done()
	live := r.expectLive()
	built.Env[hooks.LiveTokenEnv] = live.token
	p := newProc(r.hook, r.claude, built.Args, r.childEnv(a.step, built.Env), r.workspace)
	p.spool = &spool{dir: filepath.Join(r.runDir, r.run, stepDirName(a.step))}
	out, err := p.start()
	if err != nil {
		return attemptOut{err: &StartError{Reason: fmt.Sprintf("claude %s: %v", r.claude, err)}}
	}
	if a.spawned != nil {
		a.spawned()
	}
	// The store opens while claude starts; without it there is no step.
	var store SessionStore
	if r.store != nil {
		if store, err = r.store.get(ctx); err != nil {
			out.Close()
			p.stop(2 * time.Second)
			return attemptOut{err: &StartError{Reason: err.Error()}}
		}
	}
	r.mu.Lock()
	r.active[p] = struct{}{}
	r.current = a.step
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.active, p)
		r.mu.Unlock()
	}()
	if !r.opts.SkipGuardsLive {
		if err := r.awaitLive(ctx, live, p); err != nil {
			out.Close()
			p.stop(2 * time.Second)
			return attemptOut{err: &StartError{Reason: err.Error()}}
		}
	} else {
		r.forget(live)
	}
	if err := p.sendUser(a.prompt); err != nil {
		p.stop(2 * time.Second)
	}
	emit := a.emit
	if emit == nil {
		emit = func(Event) {}
	}
	s := &stream{handoff: a.handoff, warned: a.warned, timing: defaultTiming(r.opts.StartTimeout)}
	s.timing.idle = r.opts.Resilience.idle()
	began := time.Now()
	o := p.supervise(ctx, out, s, watchers{
		onLine: emit,
		onMirror: func(line []byte) {
			if store == nil {
				return
			}
			if err := store.Mirror(ctx, line); err != nil {
				emit(Event{Kind: EventStore, Data: EventData(ErrorEvent{Error: err.Error(), Op: "mirror"})})
			}
		},
		onNear: func() {
			emit(Event{Kind: EventHandoff, Data: EventData(handoffNear{Phase: HandoffNear, Context: s.context, WarnAt: a.handoff.WarnAt(), At: a.handoff.At()})})
		},
		onInit: func(sid string) {
			r.mu.Lock()
			r.sessions[sid] = a.step
			watch := r.onSession
			r.mu.Unlock()
			if watch != nil {
				watch(sid)
			}
		},
	})
	if err := scrubTree(r.configDir, began.Add(-time.Second), r.red); err != nil {
		emit(Event{Kind: EventError, Data: EventData(ErrorEvent{Error: "redacting the config dir: " + err.Error()})})
	}
	if sent, words := p.interrupted(); sent {
		o.words = words
	}
	if errors.Is(o.err, ErrInterrupted) {
		o.text = o.words
	}
	return o
}

func writeStepFiles(dir string, b Built) error {
	if b.Settings != nil {
		js, err := json.MarshalIndent(b.Settings, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "settings.json"), js, 0o600); err != nil {
			return err
		}
	}
	if b.Agents != nil {
		if err := os.WriteFile(filepath.Join(dir, "agents.json"), b.Agents, 0o600); err != nil {
			return err
		}
	}
	if b.MCP != nil {
		if err := os.WriteFile(filepath.Join(dir, "mcp.json"), b.MCP, 0o600); err != nil {
			return err
		}
	}
	return nil
}
