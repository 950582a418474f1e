// Package flow is flower's orchestration layer: steps, workflows, the
// documents that pass between them, the five roles, the goal guard, the
// human channel and the starter flow. It runs agents only through a Host
// (harness.Runtime is one; Bare makes one of any Runner) and never spawns a
// process itself. docs/seed-map.md maps the specification's names to these.
//
// # Lifecycle
//
// Build Steps (NewStep, or the factories ClarifyStep, GoalStep, WithGoal),
// put them into a Workflow (NewWorkflow, or StarterFlow), and call
// Workflow.Run with a Host. Run copies Workflow.Context into a fresh Ctx,
// then for each step: When may skip it; Event("step") announces it; the
// attempt loop runs Host.Run until the result is OK and the Gate passes,
// the retries are spent, or the Gate returns a *StepAbort; the result and
// session are recorded (ctx and Lineage); a passed step writes ctx[name]
// (Reduce, default the text); a failed one follows OnFail. Run returns the
// final Ctx. StarterFlow builds a Starter (the Workflow and its
// HumanChannel) and starts nothing: Channel.Open starts the channel's Unix
// socket and publishes it for `flower tell`, Starter.Close undoes both, and
// Starter.Run opens a channel nobody opened for the run alone. WakeState is a read-only probe usable at any
// time. LockWorkspace (a flock on <workspace>/.flower/flow.lock, dropped with
// the process) keeps one flow per workspace: take it before StarterFlow,
// which may amend the brief, and Unlock when the flow ends.
//
// # Tables
//
// Three ways to join sessions within one run:
//
//	ResumeFrom: "a"              continue step a's session (its context carries over)
//	ResumeFrom: "a", Fork: true  branch from a's session into a new one; a's stays untouched
//	no ResumeFrom                a fresh session; state travels only through ctx
//	                             (a Prompt that reads ctx[name], Reduce)
//
// ResumeFrom looks in ctx["_sessions"] first, then in the Lineage (a step of
// an earlier process); found nowhere, the step runs fresh.
//
// The three values of OnFail:
//
//	"stop" (default, "" too)  the workflow ends; ctx["_failed"] names the step; Run returns no error
//	"continue"                the failure is recorded, the next step runs
//	"raise"                   the workflow ends and Run returns a *StepError
//
// ctx.Outcome() turns a stopped run into a *StepError for a command line
// (exit code 3 when a StepAbort stopped it, else 1).
//
// Private ctx keys (all start with "_", so they never collide with step
// names): _results (map name → harness.StepResult, written passed or not),
// _sessions (map name → session id), _aborted (the StepAbort message),
// _failed (the step that stopped the run), _runtime (the Host, for gates
// that run agents), _on_event (the event callback, never nil), _channel,
// _workbench, _workflow (the name), _woke (StarterFlow: 1 on wake). The
// factories add _brief (Brief), _missing (sections a clarify reply lacked),
// _goal (Goal), _goal_frozen (FrozenGoal: what every judge round is given),
// _goal_warned (the frozen sha256 whose changed file was reported),
// _verdict (Verdict), _round (goal-guard rounds judged).
//
// Event("step") carries {index, total, resumed, woke}: resumed is true when
// the step continues its own session from an earlier process (continuity);
// woke is how many sessions the Lineage already holds for the step's name.
//
// Continuous (default true): a step without ResumeFrom whose name has a
// session in the Lineage continues that session, with ResumePrompt (when
// set) instead of Prompt — the "continuity" with_goal must not break.
//
// Lineage: <run_dir>/lineage.json, workspace → workflow → step name →
// session ids (oldest first), rewritten under a file lock. Keying by
// workspace means two workspaces sharing a run dir never wake or resume each
// other's sessions (WakeState counts only the workspace's own runs too).
// Only original step names are remembered: retry labels (name#round2,
// name#retry1) and judge rounds (label#N) never are.
//
// The workflow's own events, Event("step"), the goal step's Event("task")
// and Event("goal"), go to Host.Record (harness.Runtime: the run's
// events.jsonl), so `flower runs show` and the oracle see them.
//
// Host.OnSession gets the workflow's callback (record the step's session in
// ctx and Lineage as soon as it is known) around the single Run call only;
// it is removed before the Gate, so the judge's session is never taken for
// the step's. What a Workflow does follows from its Host's answers, never
// from which methods a runner happens to have.
//
// The inbox is fed by `flower tell`: a running flow publishes its channel
// socket in <run_dir>/<run>/channel.json (HumanChannel.Open); Tell finds the newest
// live one of a workspace and relays the message, which waits for the
// coordinator's next inbox call, is logged with its time (## 留言) and is
// reported to OnInbox (the status line). Terminal input has one reader,
// Lines, shared by TerminalAnswers and the interrupt prompt.
//
// HumanChannel: an MCP stdio server (`flower mcp-channel`, from
// --mcp-config) offers two tools, ask and inbox (model names
// mcp__flower__ask / mcp__flower__inbox); each call is relayed as one JSON
// line over a private Unix socket (FLOWER_CHANNEL_SOCKET) to the process
// holding the channel, which asks its Answerer (terminal, or a file of
// answers in pipelines). Answer states: "answered"; "timeout" (nobody
// answered within Timeout; NoWait = unattended: at once, no hang, unless
// the answers come from a file; a zero Timeout waits 1800 s); "refused" (an
// empty answer, or MaxAsks spent). Every exchange is appended to LogPath (问答记录.md); Amend writes
// the person's words into AmendPath (the brief's 目标 section, labelled),
// never twice.
//
// WakeState's report is the Wake struct: wake, workspace, workbench,
// brief_path, goal_path, has_brief, missing, brief_goal, has_goal,
// goal_complete, checks, unverifiable, run_dir, runs, last_run, sessions.
//
// # Choices
//
//   - Gates take a context.Context and return (bool, error): the Go form of
//     "sync or async". A non-abort gate error ends Run with that error. Gates run only on OK results
//     (and the factories' gates refuse a result that is not OK anyway).
//   - Brief aliases include English names; a heading needs a marker (#,
//     **…**, a colon, a list number) or a line of its own, so body text that
//     starts with a section word is not cut; a list number takes text after
//     a space before a Chinese name ("3. 边界 只改 cli.py"), never glued text
//     ("1. 目标文件存在"). A closed fence tagged md/markdown (or untagged) is
//     unwrapped for documents (never for the verdict, above); other closed
//     fences are body text.
//   - The verdict is typed data. Every judge round (WithGoal, whatever its
//     Spec) runs with --json-schema VerdictSchema ({verdict, checks,
//     failed, reason}) and the goal step with GoalSchema ({goal,
//     checklist}); claude adds a StructuredOutput tool and returns the value
//     as StepResult.Structured. A round is achieved only when the verdict is
//     achieved, checks has one passed entry per frozen checklist item in
//     order, and failed is empty (verdictFromTyped); an achieved that
//     contradicts itself is not_yet with the contradiction fed back; no
//     typed value is no verdict (Judged). The judge's Markdown is kept as
//     Verdict.Document and decides nothing; each round's decision is
//     recorded as Event("verdict") in the typed shape.
//   - ParseVerdict (free text, for library users) is conservative: exactly
//     one positive form as the conclusion, failing sections that hold an
//     explicit none, and nothing negative anywhere (see its doc).
//   - A failed run is no result: the goal guard never parses a judge run
//     that is not OK (the round is not_yet, the run's error is the reason
//     fed back; when the rounds run out the step fails, exit 1), and the
//     clarify and goal gates freeze nothing from a failed run.
//   - The goal is frozen: the goal step records it as FrozenGoal (text and
//     sha256) in ctx and as Event("goal") {state "frozen", path, sha256,
//     text} in the run's record; every judge round is given that copy.
//     Before each round the guard compares 目标.md with it: a file that
//     differs (Bash can write it; no guard reads a shell command) is
//     reported once as Event("goal") {state "changed", disk_sha256} and not
//     believed. WithGoal without a goal step freezes what it judges in its
//     first round; a goal the person amends is frozen anew. StarterFlow runs
//     the goal step on every start (AlwaysSet), so a wake, a re-clarified
//     brief (damaged or New) and a forged file never supply the goal.
//   - Every options struct's zero value means the default: Timeout 0 is
//     1800 s (NoWait answers at once, WaitForever never gives up), Rounds 0
//     is 3, MaxAsks 0 is no cap.
//   - StarterFlow's instructions go to ClarifyStep, GoalStep and WithGoal;
//     the coordinator is built with "" and meets the instructions through
//     the brief.
//   - Handoff section names follow harness (在做什么 / 已定结论 / 走不通的路 /
//     下一步 / 现场), which writes the handoffs.
//   - The rule texts say what each role must and must not do.
package flow
