package flow

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flowerhq/flower/harness"
)

// Starter names, byte-exact.
const (
	StarterName       = "starter"
	CoordinatorName   = "协调者"
	WorkStepName      = "执行"
	WakeLabel         = "唤醒时追加"
	DefaultWorkerText = "你负责实现。每改一处就跑一次验证,别攒到最后。"
	DefaultBriefName  = "需求.md"
	DefaultGoalName   = "目标.md"
	DefaultLogName    = "问答记录.md"
)

// ErrNoAsk is returned by StarterFlow when there is nothing to continue and
// no ask was given.
var ErrNoAsk = errors.New("要给一句诉求,例如 flower '帮我做一个 X'")

// ErrNotGit is returned by StarterFlow for isolate without a git workspace,
// before anything is spent.
var ErrNotGit = errors.New("isolate 需要工作区是 git 仓库")

// StarterOptions are the starter flow's options. Every zero value means
// the default DefaultStarterOptions holds (Timeout 0 is 1800 s; unattended
// is NoWait).
type StarterOptions struct {
	Workspace   string // default "."
	RunDir      string // default "runs"
	New         bool   // ignore an existing brief/goal and earlier sessions
	Isolate     bool   // the coder works in its own git worktree
	ClarifyOnly bool
	NoGoal      bool // no goal step and no goal guard: the coordinator's run is the work
	Rounds      int  // default 3
	JudgeCanRun bool
	MaxAsks     int           // 0 = no cap
	Timeout     time.Duration // 0 = DefaultTimeout; NoWait = unattended (timeout_s=0); WaitForever = None
	// Instructions go into ClarifyStep, GoalStep and WithGoal (the
	// clarifier, the goal-setting judge and the round judge). The
	// coordinator is built with "": it meets the instructions through the
	// brief.
	Instructions string
	WorkerPrompt string // default DefaultWorkerText
	BriefName    string
	GoalName     string
	LogName      string
	// Answerer answers the channel's questions (terminal, file); nil: nobody.
	Answerer Answerer
	// ChannelCommand starts the channel's MCP server (default: this
	// executable + "mcp-channel").
	ChannelCommand []string
	// Model is passed to every role.
	Model string
	// FrozenGoal continues an interrupted flow whose goal step ran elsewhere
	// (a fleet takeover): the goal file holds the goal that step froze,
	// brought from the session store by the caller, and the judge keeps it
	// instead of a new goal step deriving another one. It applies only when
	// the brief on disk is complete and nothing new is said; a caller must
	// never set it for a goal file an agent could have written.
	FrozenGoal bool
}

// DefaultStarterOptions returns the defaults: workspace ".", run dir
// "runs", 3 rounds, a 1800 s ask timeout, DefaultWorkerText and the
// default document names.
func DefaultStarterOptions() StarterOptions {
	return StarterOptions{Workspace: ".", RunDir: "runs", Rounds: 3, Timeout: DefaultTimeout,
		WorkerPrompt: DefaultWorkerText, BriefName: DefaultBriefName, GoalName: DefaultGoalName, LogName: DefaultLogName}
}

func (o *StarterOptions) fill() {
	d := DefaultStarterOptions()
	if o.Workspace == "" {
		o.Workspace = d.Workspace
	}
	if o.RunDir == "" {
		o.RunDir = d.RunDir
	}
	if o.Rounds == 0 {
		o.Rounds = d.Rounds
	}
	if o.Timeout == 0 {
		o.Timeout = d.Timeout
	}
	if o.WorkerPrompt == "" {
		o.WorkerPrompt = d.WorkerPrompt
	}
	if o.BriefName == "" {
		o.BriefName = d.BriefName
	}
	if o.GoalName == "" {
		o.GoalName = d.GoalName
	}
	if o.LogName == "" {
		o.LogName = d.LogName
	}
}

// WorkbenchFor is the one definition of where a workspace's workbench lives:
// isolate → <ws>.parent/.flower-<ws.name> (outside the repo, which isolated
// agents cannot write into); otherwise <ws>/.flower. WakeState and
// StarterFlow both use it; a driver that wants the brief's path goes through
// WakeState rather than composing paths itself.
func WorkbenchFor(workspace string, isolate bool) *harness.Workbench {
	wb := harness.NewWorkbench(workspace)
	if isolate {
		wb.Home = filepath.Join(filepath.Dir(workspace), ".flower-"+filepath.Base(workspace))
	}
	return wb
}

// isGitRepo reports whether dir is inside a git work tree (a .git dir or
// file in it or an ancestor). flow spawns no processes, so no `git`.
func isGitRepo(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// StarterFlow builds the ready-to-run three-step workflow the flower command
// runs: clarify → set the goal → work under the goal guard. Wiring:
//
//	Workflow(name="starter", channel=ch, workbench=wb, steps=[…])
//	ch = HumanChannel(log_path=<notes>/问答记录.md, amend_path=<brief_path>, max_asks, timeout)
//	协调者 = Coordinator("协调者", "", {"coder": Worker(…, isolate)}, ch)
//
// Instructions go to ClarifyStep, GoalStep and WithGoal, never to the
// coordinator's rules.
//
// isolate without a git workspace fails here (ErrNotGit), before any spend.
// A complete brief on disk means wake; no wake and no ask is ErrNoAsk. On
// wake the new sentence lands in three places, or it silently does nothing:
// appended to the brief (ch.Amend, label 唤醒时追加, never twice), the goal
// re-derived, and sent straight to the coordinator (whose resumed context
// holds the old goal). The goal step runs on every start (AlwaysSet): a goal
// file on disk is never believed, so a wake, a re-clarified brief (damaged
// or New) and a forged file all get a goal derived from the brief, frozen
// for the judge (FrozenGoal) — unless StarterOptions.FrozenGoal continues a
// flow whose frozen goal the caller restored. Building starts nothing: see
// Starter for opening and closing the channel.
func StarterFlow(ask string, o StarterOptions) (*Starter, error) {
	o.fill()
	ws, err := filepath.Abs(o.Workspace)
	if err != nil {
		return nil, fmt.Errorf("flow: starter: %w", err)
	}
	if o.Isolate && !isGitRepo(ws) {
		return nil, fmt.Errorf("flow: starter: %s: %w", ws, ErrNotGit)
	}
	wb := WorkbenchFor(ws, o.Isolate)
	notes := wb.Notes()
	briefPath := filepath.Join(notes, o.BriefName)
	goalPath := filepath.Join(notes, o.GoalName)
	// flower's records: the agents' write tools are fenced off them.
	wb.Protected = []string{briefPath, goalPath, filepath.Join(notes, o.LogName), lockPath(ws)}
	ask = strings.TrimSpace(ask)
	wake := false
	if !o.New {
		if b, err := LoadBrief(briefPath); err == nil && b.Complete() {
			wake = true
		}
	}
	if !wake && ask == "" {
		return nil, fmt.Errorf("flow: starter: %w", ErrNoAsk)
	}
	ch := NewHumanChannel(filepath.Join(notes, o.LogName), briefPath, o.Answerer)
	ch.MaxAsks, ch.Timeout, ch.Command = o.MaxAsks, o.Timeout, o.ChannelCommand
	said := ""
	if wake && ask != "" {
		said = ask
		if _, err := ch.Amend(said, WakeLabel); err != nil {
			return nil, fmt.Errorf("flow: starter: %w", err)
		}
	}
	role := RoleOptions{Model: o.Model}
	clarify := ClarifyStep(ch, ClarifyStepOptions{
		BriefPath: briefPath, AlwaysAsk: o.New, Role: role, Instructions: o.Instructions,
		Prompt: Text("诉求: " + ask + "\n\n先把需求问清楚(用 ask 工具问人),然后只输出四节:目标、验收标准、边界、未知与假设。"),
	})
	steps := []Step{clarify}
	if !o.ClarifyOnly {
		goalRole := role
		goalRole.CanRun = o.JudgeCanRun
		// The goal is always derived by the goal step, never taken from the
		// file: a file left by an earlier run may be forged, and a brief that
		// was re-clarified (damaged, --new) or amended needs its own goal.
		keep := o.FrozenGoal && wake && said == "" && !o.New
		goal := GoalStep(ch, GoalStepOptions{GoalPath: goalPath, BriefKey: clarify.Name, AlwaysSet: !keep,
			Role: goalRole, Instructions: o.Instructions})
		workers := map[string]harness.AgentDefinition{
			"coder": Worker("写代码、改文件、跑命令的执行者。派活时写清目标、验收标准和结果放哪。", o.WorkerPrompt,
				WorkerOptions{Isolate: o.Isolate, Model: o.Model}),
		}
		coord := Coordinator(CoordinatorName, "", workers, ch, RoleOptions{Model: o.Model})
		work := Step{Name: WorkStepName, Spec: coord, Prompt: workPrompt(clarify.Name, goal.Name, said, wb, o.NoGoal)}
		if o.NoGoal {
			steps = append(steps, work)
		} else {
			steps = append(steps, goal, WithGoal(work, ch, WithGoalOptions{
				GoalPath: goalPath, Rounds: o.Rounds, CanRun: o.JudgeCanRun, Instructions: o.Instructions, Role: role,
			}))
		}
	}
	runDir, err := filepath.Abs(o.RunDir)
	if err != nil {
		return nil, fmt.Errorf("flow: starter: %w", err)
	}
	wf := &Workflow{
		Name: StarterName, Steps: steps, Channel: ch, Workbench: wb, Continuous: !o.New,
		Lineage: NewLineage(runDir, ws, StarterName),
		Context: Ctx{KeyWoke: boolInt(wake), "_ask": ask},
	}
	return &Starter{Workflow: wf, Channel: ch}, nil
}

// Starter is the starter flow: the Workflow and its HumanChannel (the
// Workflow's Channel, typed). Building it starts nothing. Channel.Open
// starts the channel's relay and publishes it for `flower tell` (a command
// passes the Runtime's run dir, run id and workspace); Close undoes both.
type Starter struct {
	*Workflow
	Channel *HumanChannel
}

// Run runs the workflow. A channel nobody opened is opened for the run, the
// relay only (nothing published), and closed when Run returns; an open one
// is left as it is.
func (s *Starter) Run(ctx context.Context, h Host, onEvent func(harness.Event), onStep func(Step, harness.StepResult)) (Ctx, error) {
	if !s.Channel.isOpen() {
		if err := s.Channel.Open("", "", ""); err != nil {
			return nil, err
		}
		defer s.Channel.Close()
	}
	return s.Workflow.Run(ctx, h, onEvent, onStep)
}

// Close closes the channel: its relay and the published pointer. A second
// Close does nothing.
func (s *Starter) Close() error { return s.Channel.Close() }

// workPrompt is the coordinator's prompt: the brief, the goal, the workbench
// and, on wake, the person's new sentence.
func workPrompt(briefKey, goalKey, said string, wb *harness.Workbench, noGoal bool) Prompt {
	return func(c Ctx) string {
		var sb strings.Builder
		sb.WriteString("按下面确认过的需求完成任务。动手的事派给 coder 子代理。\n\n")
		sb.WriteString(c.String(briefKey) + "\n")
		if !noGoal {
			if g := c.String(goalKey); g != "" {
				sb.WriteString("\n完成的标准以下面的目标和检查清单为准,每轮结束后会有独立评审逐条核对:\n" + g + "\n")
			}
		}
		if said != "" {
			sb.WriteString("\n【" + WakeLabel + "】人刚刚新说了一句,以它为准(旧目标已据此重新推导): " + said + "\n")
		}
		sb.WriteString("\n工作台在 " + wb.Root() + ";长结果让子代理写进 " + wb.Artifacts() + ",回复里只给路径和结论。")
		return sb.String()
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// WakeStateOptions are wake_state's keyword arguments.
type WakeStateOptions struct {
	RunDir    string // default "runs"
	Isolate   bool
	BriefName string // default 需求.md
	GoalName  string // default 目标.md
}

// Wake is what WakeState finds.
type Wake struct {
	// Wake: a complete brief is on disk, so the next run continues.
	Wake         bool              `json:"wake"`
	Workspace    string            `json:"workspace"`
	Workbench    string            `json:"workbench"`
	BriefPath    string            `json:"brief_path"`
	GoalPath     string            `json:"goal_path"`
	HasBrief     bool              `json:"has_brief"`
	Missing      []string          `json:"missing,omitempty"`
	BriefGoal    string            `json:"brief_goal,omitempty"`
	HasGoal      bool              `json:"has_goal"`
	GoalComplete bool              `json:"goal_complete"`
	Checks       int               `json:"checks"`
	Unverifiable int               `json:"unverifiable"`
	RunDir       string            `json:"run_dir"`
	Runs         int               `json:"runs"`
	LastRun      string            `json:"last_run,omitempty"`
	Sessions     map[string]string `json:"sessions,omitempty"`
}

// WakeState is the read-only probe before a start: it writes not a single
// byte (no directory, no lock, no log), so a person can be told "this
// continues" or "this starts over" before anything runs.
func WakeState(workspace string, o WakeStateOptions) (Wake, error) {
	if workspace == "" {
		workspace = "."
	}
	if o.RunDir == "" {
		o.RunDir = "runs"
	}
	if o.BriefName == "" {
		o.BriefName = DefaultBriefName
	}
	if o.GoalName == "" {
		o.GoalName = DefaultGoalName
	}
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return Wake{}, fmt.Errorf("flow: wake state: %w", err)
	}
	wb := WorkbenchFor(ws, o.Isolate)
	w := Wake{Workspace: ws, Workbench: wb.Root(), RunDir: o.RunDir,
		BriefPath: filepath.Join(wb.Notes(), o.BriefName), GoalPath: filepath.Join(wb.Notes(), o.GoalName)}
	if b, err := LoadBrief(w.BriefPath); err == nil {
		w.HasBrief, w.Missing, w.BriefGoal, w.Wake = true, b.Missing(), b.Goal, b.Complete()
	}
	if g, err := LoadGoal(w.GoalPath); err == nil {
		w.HasGoal, w.GoalComplete, w.Checks, w.Unverifiable = true, g.Complete(), len(g.Checks), len(g.Unverifiable())
	}
	if rows, err := harness.ReadManifest(filepath.Join(o.RunDir, "manifest.json")); err == nil {
		for _, r := range rows {
			if r.Workspace == "" || r.Workspace == ws { // only this workspace's runs
				w.Runs, w.LastRun = w.Runs+1, r.Run
			}
		}
	}
	lin := NewLineage(o.RunDir, ws, StarterName)
	for _, s := range []string{ClarifyStepName, GoalStepName, WorkStepName} {
		if sid := lin.Latest(s); sid != "" {
			if w.Sessions == nil {
				w.Sessions = map[string]string{}
			}
			w.Sessions[s] = sid
		}
	}
	return w, nil
}
