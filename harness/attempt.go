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

	"github.com/flowerhq/flower/internal/envlist"
	"github.com/flowerhq/flower/internal/textclip"
)

// attemptArgs are the per-attempt inputs of one claude process.
type attemptArgs struct {
	spec     AgentSpec
	prompt   string
	step     string
	resume   string
	fork     bool
	resumeAt string
	emit     func(Event) // nil: record nothing (the handoff round)
	warned   *bool
	handoff  HandoffPolicy
	settled  func(attemptOut) // a clean success result arrived (nil: not told)
	spawned  func()           // claude started (nil: not told)
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
	env, done, err := r.loadResume(ctx, a, dir)
	if err != nil {
		return Built{}, nil, err
	}
	bo := BuildOptions{
		Cwd: r.workspace, Resume: a.resume, Fork: a.fork, ResumeAt: a.resumeAt,
		Workbench: r.opts.Workbench, SpillThreshold: r.opts.SpillThreshold, HookPath: r.hook,
		SessionMirror: r.store != nil, RunDir: r.runDir, AllowDirs: r.allowDirs,
		PartialMessages: r.opts.Resilience.idle() > 0,
		SettingsPath:    filepath.Join(dir, "settings.json"), MCPPath: filepath.Join(dir, "mcp.json"),
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
	p := newProc(r.hook, r.claude, built.Args, r.childEnv(a.step, built.Env), r.workspace)
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
		if store, err = r.store.wait(); err != nil {
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
				emit(Event{Kind: EventStore, Data: map[string]any{"error": err.Error(), "op": "mirror"}})
			}
			if s.results > 0 {
				// The CLI mirrors its cost state after the result, while
				// it exits: settle that too, so that Close has nothing
				// left to write (a checkpoint at Close costs two fsyncs
				// after claude is gone).
				r.checkpointSoon(ctx)
			}
		},
		onNear: func() {
			emit(Event{Kind: EventHandoff, Data: map[string]any{"phase": HandoffNear, "context": s.context, "warn_at": a.handoff.WarnAt(), "at": a.handoff.At()}})
		},
		onResult: func() {
			r.checkpointSoon(ctx)
			if humanInt, _ := p.interrupted(); a.settled != nil && !humanInt && s.settledOK() {
				a.settled(attemptOut{sessionID: s.sessionID, text: s.final.Get("result").String()})
			}
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
		emit(Event{Kind: EventError, Data: map[string]any{"error": "redacting the config dir: " + err.Error()}})
	}
	if errors.Is(o.err, ErrInterrupted) {
		_, words := p.interrupted()
		o.text = words
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

// handOff has the full session write its handoff (budget lifted, no UI
// events) or, on an overflow error, assembles the degraded one; writes it to
// <notes>/交接-<step>.md when there is a workbench. The done event carries
// the writing round's cost (its own stream is not recorded).
func (r *Runtime) handOff(ctx context.Context, spec AgentSpec, step, prompt, sessionID string, out attemptOut, emit func(Event)) Handoff {
	emit(Event{Kind: EventHandoff, Data: map[string]any{"phase": HandoffWriting, "session_id": sessionID, "context": out.context}})
	var h Handoff
	var cost float64
	if !errors.Is(out.err, ErrHandoffDue) || sessionID == "" {
		h = DegradedHandoff(step, prompt, textclip.Runes(out.err.Error(), 200))
	} else {
		hs := spec
		hs.MaxBudgetUSD = 0
		hs.MaxTurns = 0
		used := out.context
		p := strings.NewReplacer("{used}", strconv.Itoa(used), "{window}", strconv.Itoa(r.opts.Handoff.Window)).Replace(HandoffPrompt)
		w := r.attempt(ctx, attemptArgs{spec: hs, prompt: p, step: step, resume: sessionID, emit: nil, handoff: HandoffPolicy{}})
		cost = w.cost
		h = ParseHandoff(w.text, step)
		if w.err != nil || !h.Complete() {
			why := ""
			if w.err != nil {
				why = w.err.Error()
			}
			if why == "" {
				why = "handoff incomplete, missing " + strings.Join(h.Missing(), ", ")
			}
			h = DegradedHandoff(step, prompt, textclip.Runes(why, 200))
		}
	}
	h.Step = step
	if wb := r.opts.Workbench; wb != nil {
		if err := h.write(wb.Notes(), r.red); err != nil {
			emit(Event{Kind: EventError, Data: map[string]any{"error": err.Error()}})
		}
	}
	emit(Event{Kind: EventHandoff, Data: map[string]any{"phase": HandoffDone, "degraded": h.Degraded, "path": h.Path, "sections": h.Sections(),
		"retired": sessionID, "cost_usd": cost}})
	return h
}
