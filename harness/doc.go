// Package harness is flower's execution core: one step = one claude process,
// made resilient. docs/seed-map.md maps the specification's names to these.
//
// The model of one step (Runtime.Run): spawn → stream → decide → result.
//
//   - Spawn: the AgentSpec compiles into an argv plus a per-step
//     settings.json (BuildArgs; kept in <run_dir>/<run>/<step>/), and claude
//     starts in its own process group with stream-json in and out; the
//     prompt goes in as a user line.
//   - Stream: every stdout line becomes an Event (recorded in
//     <run_dir>/<run>/events.jsonl and handed to RunOptions.OnEvent), and
//     transcript frames are mirrored into the session store, until the
//     process exits.
//   - Decide: the attempt's typed outcome takes one of four exits: success;
//     human interrupt (resume the same session with the words +
//     InterruptNote, not counted); context full (the same session writes its
//     handoff document with the budget lifted and max turns kept, a fresh
//     session starts from its prompt block, followed by the words of a
//     human interrupt that landed in that attempt or its writing round);
//     retryable failure (classify, wait until the API answers, back off,
//     resume the same session).
//   - Result: the finished StepResult is returned and written to the run's
//     row of <run_dir>/manifest.json, updated under a file lock one row at a
//     time (the other rows are not decoded); while a step runs, the row lists
//     it as running, so that a flower killed mid-step leaves a trace the
//     next Runtime in that run dir marks (RecoverRunDir).
//
// Lifecycle of a Runtime: New loads <workspace>/.env (never overriding the
// environment), checks credentials up front (a missing key fails here, never
// at the first step), locates claude and flower-hook, prepares the session
// store (<run_dir>/sessions.db, opened through Options.OpenStore by the
// first step; a store that cannot open fails every step with a
// *StartError), opens the events file and the private Unix socket that
// flower-hook reports to (FLOWER_SOCKET). Run may be called many times, and
// concurrently; nothing a Run starts outlives it. Close stops the socket
// (removing its directory), closes the events file and the store; it is
// idempotent.
//
// One attempt is two parts. The stream machine (stream.go) is pure and
// owns every decision: fed stdout lines, interrupts, cancellation, the
// leader's exit and an injected clock, it answers with actions (close
// stdin, interrupt, SIGTERM, SIGKILL, give up on stdout) and at the end with
// the typed outcome (outcome.go): nil, ErrInterrupted, ErrHandoffDue,
// *StartError, *ExitError or *APIError. The supervisor (proc.go) only
// observes and performs. Run's loop is decide (step.go), a pure function of
// that outcome, plus its effects (resume, hand off, back off, end).
//
// Process hygiene: claude starts through internal/child under a supervisor,
// `flower-hook __supervise` (child.Supervised): the supervisor is the child
// subreaper of the step's whole tree and starts claude in a process group
// of its own; SIGTERM is passed on to that group, and a SIGKILL first kills
// every descendant (child.KillTree) — claude starts its tools in process
// groups of their own, so a group signal alone misses them. Why nothing of
// a step outlives flower, even when flower gets SIGKILL: as subreaper, the
// supervisor inherits every orphan of the tree, so each process of the step
// stays its descendant in /proc for as long as it lives; the supervisor has
// no death signal and is not in claude's group, so flower's death does not
// kill it; its lifeline (fd 3) is a pipe whose only write end flower holds,
// and the kernel closes that end when flower ends in any way, so the
// supervisor reads EOF, SIGKILLs every descendant until /proc shows none
// alive, and exits. Off Linux (and on Linux with FLOWER_SUPERVISE=portable)
// the supervisor has no subreaper and no /proc: it keeps the same lifeline
// and finds the tree by ps listings that remember its process groups (see
// internal/child). SIGHUP is handled like SIGTERM by the command (the step
// ends cancelled, naming the signal). The group is signalled, never just
// the leader. A child that prints non-JSON before system/init,
// dies before it, or stays silent past StartTimeout ends the attempt with a
// *StartError carrying its stderr tail (not retried), and the group is
// killed on every path. Cancelling Run's context stops claude at once
// (SIGTERM, SIGKILL 2 s later). Stalls end: steps stream partial messages,
// and an attempt with no stdout line for Resilience.IdleTimeout (default 5
// min) while no tool call is unanswered and no task runs ends with a
// StallError and a "stall" event; it is transient, so the next attempt
// resumes the same session. Long tool runs and subagents are legitimate
// and suspend the limit.
//
// Wiring: harness links neither a session store nor the scripted model.
// Options.OpenStore and Options.CopyCredentials are plugged in by the root
// package flower (flower.New is the default Runtime with its SQLite
// store), the guard self-test by the command; without OpenStore a Runtime runs with no
// store.
//
// Choices written down here on purpose:
//   - permission_mode "default" sends no --permission-mode flag (2.1.328 calls
//     that mode "manual").
//   - Instructions, the optional prelude and the workbench block go to
//     --append-system-prompt, so the Claude Code preset prompt stays.
//   - The CLI's own retries are capped with CLAUDE_CODE_MAX_RETRIES
//     (Options.CLIRetries, default 1) so that Resilience owns the policy;
//     Resilience defaults to 5 attempts, 2 s doubling up to 60 s.
//   - stdin is closed after the first result line; the CLI still finishes
//     background subagents, and the last result is the step's.
//   - A result ends the step: once a result arrives with no background
//     subagent pending (task_started without its task_notification; a
//     background shell, task_type local_bash, does not count: a dev server
//     would hold the step forever), claude gets 10 s to exit, then its
//     tree is killed and the result stands (an ok result stays ok).
//   - A session the store cannot load (a damaged store moved aside, see
//     ErrSessionLost) that claude's config dir does not hold either starts
//     fresh, with a "store" event (fresh: true), rather than fail with
//     "No conversation found"; so does a flow's own session
//     (RunOptions.ResumeOwn) that nothing holds because claude never wrote
//     it (its attempt was stopped right after claude named it).
//   - Crossing HandoffPolicy.At interrupts the turn (control request) and
//     ends the attempt with HandoffDue even if a result follows.
//   - An overflow error ("prompt is too long" …) hands off with the degraded
//     handoff: that session cannot take the handoff prompt any more.
//   - The plugin directory is not loaded unless Options.PluginDir is set:
//     plugin/hooks/hooks.json calls the same guards the per-step settings
//     already install, and both would run.
//   - The Handoff document (在做什么 / 已定结论 / 走不通的路 / 下一步 / 现场)
//     lives here, since the Runtime writes it; its headings are parsed by
//     mdsections with the same rules as flow's Brief, Goal and Verdict
//     (flow re-exports none of it: one name, one place).
//   - manifest.json is a JSON array of ManifestRow, one per run.
//
// Performance notes: a step's own bookkeeping runs beside claude where that
// is free, and in series where it is not worth a mechanism. Nothing but the
// spawn runs on flower's side before claude is started; the store opens
// after the spawn (a resume opens it first, to load the session), and the
// running row is written while claude boots (runRow.begin, joined before the
// end row). The end row is written once claude has exited, and beside it
// the store settles its writes (one Checkpoint: SQLite's write-ahead log is
// copied into the database), so the log stays short over a long run and
// Close has little left to write. Patterns compile on first use
// (internal/lazyre), and the stream machine reads lines in place (gjson over
// the line, no copy of a big text). BenchmarkStepVsBare times a trivial step
// under `flower step` against a bare `claude -p` on the same scripted model
// (target ≤ 1.05×); BenchmarkStepParts splits the gap. BenchmarkStepGlance,
// BenchmarkStepVerdict and BenchmarkStepFollowed do the same for a sandboxed
// glance, a typed judge and a step followed live, each against its own bare
// baseline (docs/performance.md).
package harness
