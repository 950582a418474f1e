package flow

import (
	"context"
	"strings"

	"github.com/flowerhq/flower/harness"
)

// ClarifyResume is the clarify step's resume prompt: what a clarifier that
// continues its own earlier session is told instead of the whole ask.
const ClarifyResume = "继续上次的需求澄清。已经问过的不要再问;还缺的问清楚,然后按规定只输出四节:目标、验收标准、边界、未知与假设。"

// GoalPrompt asks the goal-setting judge for a goal and checklist; %s is the
// brief block.
const GoalPrompt = `下面是已经确认的需求。把它变成目标和检查清单。

%s

先弄清楚你所在的环境(能跑什么、看得到什么),再写检查清单:每条都要能实际检验;在这个环境里验证不了的,写成 "[此环境无法验证:原因] 条目"。先写两节给人看:「## 目标」和「## 检查清单」(每条一行,用 "- " 开头)。
最后调用 StructuredOutput 工具提交同样的内容,只有它算数:goal(目标,一段话)、checklist(检查清单,每条一项,不能为空)。`

// ClarifyStepOptions are clarify_step's keyword arguments.
type ClarifyStepOptions struct {
	BriefPath string
	Prompt    Prompt
	// Name defaults to "确认需求".
	Name string
	// Spec defaults to Clarify(Name, channel, Role).
	Spec         *harness.AgentSpec
	Instructions string
	// AlwaysAsk clarifies even when a complete brief is on disk.
	AlwaysAsk bool
	OnFail    string
	Retries   int
	// Role is the rest of the clarifier's options (model, effort, budget …).
	Role RoleOptions
}

// ClarifyStepName and GoalStepName are the factories' default step names.
const (
	ClarifyStepName = "确认需求"
	GoalStepName    = "设定目标"
)

// docStepSpec resolves a document step's name (default def) and spec: an
// explicit spec wins, else the role built for that name with the step's
// Instructions over the role's.
func docStepSpec(name, def, instructions string, role RoleOptions, explicit *harness.AgentSpec,
	build func(string, RoleOptions) harness.AgentSpec) (string, harness.AgentSpec) {
	if name == "" {
		name = def
	}
	if explicit != nil {
		return name, *explicit
	}
	if instructions != "" {
		role.Instructions = instructions
	}
	return name, build(name, role)
}

// completer is a document that knows whether it is complete.
type completer interface{ Complete() bool }

// unlessOnDisk is a document step's When: the step runs when always is set
// or no complete document loads from path; a complete one is injected into
// ctx instead, and the step is skipped.
func unlessOnDisk[D completer](always bool, path string, load func(string) (D, error), inject func(Ctx, D)) func(Ctx) bool {
	return func(c Ctx) bool {
		if always {
			return true
		}
		if d, err := load(path); err == nil && d.Complete() {
			inject(c, d)
			return false
		}
		return true
	}
}

// ClarifyStep builds the step that clarifies: ask → parse a Brief → when all
// four sections are there, freeze it to BriefPath. Its When puts a complete
// brief from disk into ctx and skips (unless AlwaysAsk) — even a skipped
// clarify must inject, or later steps get no brief; its Gate records the
// missing sections or freezes; its Reduce gives the brief's prompt block,
// not the model's raw text; ResumeFrom stays empty (the next step is a new
// session that gets the brief, never the Q&A).
func ClarifyStep(ch Channel, o ClarifyStepOptions) Step {
	name, spec := docStepSpec(o.Name, ClarifyStepName, o.Instructions, o.Role, o.Spec,
		func(n string, r RoleOptions) harness.AgentSpec { return Clarify(n, ch, r) })
	inject := func(c Ctx, b Brief) {
		c[BriefKey] = b
		c[name] = b.PromptBlock()
		delete(c, MissingKey)
	}
	return Step{
		Name: name, Spec: spec, Prompt: o.Prompt,
		Retries: o.Retries, OnFail: o.OnFail,
		ResumePrompt: Text(ClarifyResume),
		When:         unlessOnDisk(o.AlwaysAsk, o.BriefPath, LoadBrief, inject),
		Gate: func(_ context.Context, r harness.StepResult, c Ctx) (bool, error) {
			if !r.OK { // a failed run is no reply: it never freezes a brief
				return false, nil
			}
			b := ParseBrief(r.Text)
			if !b.Complete() {
				c[MissingKey] = b.Missing()
				return false, nil
			}
			b, err := b.Write(o.BriefPath)
			if err != nil {
				return false, err
			}
			inject(c, b)
			return true, nil
		},
		Reduce: func(_ harness.StepResult, c Ctx) string {
			b, _ := c[BriefKey].(Brief)
			return b.PromptBlock()
		},
	}
}

// GoalStepOptions are goal_step's keyword arguments.
type GoalStepOptions struct {
	GoalPath string
	// BriefKey is the ctx key holding the brief block (the clarify step's
	// name, default "确认需求").
	BriefKey string
	// Name defaults to "设定目标".
	Name string
	// Spec defaults to Judge(Name, channel, Role); pass Role.CanRun to let
	// the goal-setting judge run commands (there is no CanRun of its own).
	Spec         *harness.AgentSpec
	Instructions string
	// AlwaysSet derives the goal even when a complete one is on disk.
	AlwaysSet bool
	OnFail    string
	Retries   int
	Role      RoleOptions
}

// GoalStep builds the step that sets the goal: the judge reads the brief and
// gives a typed goal and checklist (GoalSchema, through --json-schema; its
// Markdown is only for people), which is frozen to GoalPath (rendered as
// Markdown) and put into ctx. No typed goal, or an empty one, freezes
// nothing. Checks marked "[此环境无法验证:…]" are announced at once as
// Event("task") {unverifiable,total,path}: their fate is decided now, not
// after a whole round of work. It has no ResumePrompt: goal setting sends
// the brief in full anyway. The goal it freezes (or loads, when it skips)
// goes into ctx as FrozenGoal too and into the run's record as
// Event("goal") {state "frozen", path, sha256, text}: what every judge round
// is given, whatever the file holds later. A failed run freezes nothing.
func GoalStep(ch Channel, o GoalStepOptions) Step {
	name, spec := docStepSpec(o.Name, GoalStepName, o.Instructions, o.Role, o.Spec,
		func(n string, r RoleOptions) harness.AgentSpec { return Judge(n, ch, r) })
	spec.JSONSchema = GoalSchema // the goal is typed, whoever sets it
	briefKey := o.BriefKey
	if briefKey == "" {
		briefKey = ClarifyStepName
	}
	inject := func(c Ctx, f FrozenGoal) {
		c[GoalKey] = f.Goal
		c[FrozenGoalKey] = f
		delete(c, goalWarnedKey)
		c[name] = f.Goal.PromptBlock()
		c.emit(f.event(name, harness.GoalFrozen, ""))
	}
	return Step{
		Name: name, Spec: spec, Retries: o.Retries, OnFail: o.OnFail,
		Prompt: func(c Ctx) string {
			brief := c.String(briefKey)
			if brief == "" {
				if b, ok := c[BriefKey].(Brief); ok {
					brief = b.PromptBlock()
				}
			}
			return strings.Replace(GoalPrompt, "%s", brief, 1)
		},
		When: unlessOnDisk(o.AlwaysSet, o.GoalPath, loadFrozen, inject),
		Gate: func(_ context.Context, r harness.StepResult, c Ctx) (bool, error) {
			if !r.OK { // a failed run is no reply: it never freezes a goal
				return false, nil
			}
			g, err := decodeGoal(r.Structured) // the typed goal; the Markdown is for people
			if err != nil {
				return false, nil
			}
			f, err := g.writeFrozen(o.GoalPath)
			if err != nil {
				return false, err
			}
			inject(c, f)
			if u := g.Unverifiable(); len(u) > 0 {
				c.emit(eventOf(harness.EventTask, name, harness.TaskEvent{Unverifiable: u, Total: len(g.Checks), Path: o.GoalPath}))
			}
			return true, nil
		},
		Reduce: func(_ harness.StepResult, c Ctx) string {
			g, _ := c[GoalKey].(Goal)
			return g.PromptBlock()
		},
	}
}
