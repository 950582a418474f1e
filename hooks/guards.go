package hooks

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Matcher matches tool names the way a Claude Code hook matcher does: the
// whole name against a regular expression, "" and "*" matching every tool.
type Matcher struct {
	all   bool
	names map[string]bool // set when the expression is a plain A|B|C list
	re    *regexp.Regexp
}

// toolMatcher compiles a matcher expression ("Bash|Write", "mcp__.*").
// A plain list of names is matched without the regexp engine: compiling a
// regexp costs flower-hook start-up time on every tool call.
func toolMatcher(expr string) (*Matcher, error) {
	if expr == "" || expr == "*" {
		return &Matcher{all: true}, nil
	}
	if plainNames(expr) {
		m := &Matcher{names: map[string]bool{}}
		for _, n := range strings.Split(expr, "|") {
			m.names[n] = true
		}
		return m, nil
	}
	re, err := regexp.Compile("^(?:" + expr + ")$")
	if err != nil {
		return nil, fmt.Errorf("hooks: tool matcher %q: %w", expr, err)
	}
	return &Matcher{re: re}, nil
}

// MatchString reports whether the tool called name is matched.
func (m *Matcher) MatchString(name string) bool {
	switch {
	case m.all:
		return true
	case m.names != nil:
		return m.names[name]
	}
	return m.re.MatchString(name)
}

func plainNames(expr string) bool {
	for _, n := range strings.Split(expr, "|") {
		if n == "" {
			return false
		}
		for i := 0; i < len(n); i++ {
			c := n[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
				return false
			}
		}
	}
	return true
}

// DelegateReason is the deny text of the delegate guard: it tells the main
// thread what to do instead of using tool itself. Like every text the
// model reads, it is Chinese.
func DelegateReason(tool string) string {
	return "主线程不亲自用 " + tool + ":这个会话负责协调,不亲自动手。" +
		"改为派人:用 Agent 工具派一个 subagent,在它的任务里写明目标和验收标准。" +
		"让它把长产出(超过 2000 字)写到工作台的 artifacts/(工作台没有另说时就是 .flower/artifacts/)," +
		"回答里只给文件路径和结论。"
}

// Delegate is the delegate guard (PreToolUse): a main-thread call of a tool
// matched by tools is denied with DelegateReason. With glance, a Bash call
// whose command IsEphemeral passes. Subagents always pass. A Bash input
// without a readable command is not a glance.
func Delegate(in Input, tools *Matcher, glance bool) Decision {
	return delegateIn(in, tools, glance, Sandboxing{})
}

// delegateIn is Delegate with sb: with sb.On a glance runs in the
// read-only sandbox (its input rewritten, see sandboxInput).
func delegateIn(in Input, tools *Matcher, glance bool, sb Sandboxing) Decision {
	if !in.IsMainThread() {
		return Decision{Verdict: Pass, Detail: map[string]any{"subagent": true}}
	}
	if !tools.MatchString(in.ToolName) {
		return Decision{Verdict: Pass}
	}
	if glance && in.ToolName == "Bash" {
		if d, ok := sb.glance(in); ok {
			return d
		}
	}
	return Decision{Verdict: Deny, Reason: DelegateReason(in.ToolName)}
}

// Sandboxing says whether a role's main-thread Bash calls run in the
// read-only sandbox, and through which flower-hook.
type Sandboxing struct {
	// On rewrites the calls that run into `HookBin sandbox …`.
	On      bool
	HookBin string
	// Unclassified (tests only, and only with On) takes every Bash call
	// for a glance: it shows that the sandbox alone keeps the workspace
	// unchanged.
	Unclassified bool
	// Bwrap and Bash (absolute paths) make Line run bwrap directly (Linux);
	// Env is the environment the sandbox's additions are computed from and
	// Rust rustup's default toolchain.
	Bwrap, Bash string
	Env         []string
	Rust        string
	// Filter is the private file holding TIOCSTIFilter (filterFile): the
	// rewritten line opens it for bwrap; without one, claude's shell
	// writes the filter into a pipe (a fork more per glance).
	Filter string
	// locate, when set, fills in HookBin, Bwrap, Bash, Env, Rust and
	// Filter the first time a call is sandboxed (flower-hook's --sandbox).
	locate func(*Sandboxing) error
	// host is where the call came from (its cwd and environment find the
	// repository whose config a git glance reads).
	host host
}

// glance decides a main-thread Bash call that may be a glance: ok is false
// when it is none (the caller denies).
func (sb Sandboxing) glance(in Input) (Decision, bool) {
	cmd, found := bashCommand(in.ToolInput)
	accepted := found && IsEphemeral(cmd)
	if accepted {
		if d, refused := gitRunsRepoPrograms(in, cmd, sb.host); refused {
			return d, true
		}
	}
	switch {
	case sb.On && (accepted || sb.Unclassified):
		return sandboxed(in, sb, false, map[string]any{"glance": true, "classified": accepted}), true
	case accepted:
		return Decision{Verdict: Pass, Detail: map[string]any{"glance": true}}, true
	}
	return Decision{}, false
}

func bashCommand(input json.RawMessage) (string, bool) {
	if cmd, found, fast := bashCommandFast(input); fast {
		return cmd, found
	}
	var v struct {
		Command *string `json:"command"`
	}
	if json.Unmarshal(input, &v) != nil || v.Command == nil {
		return "", false
	}
	return *v.Command, true
}

// WhitelistReason is the deny text of the whitelist guard.
func WhitelistReason(role, tool string) string {
	return role + "没有 " + tool + ":这是有意为之,不是漏了配置。" +
		"把结论写进你的回答正文,框架会从那里取走。" +
		"不要尝试用别的工具或别的写法绕过。"
}

// banned returns the hands-on tools (Bash, Write, Edit, NotebookEdit) that
// are not in allowed, in that order: what the whitelist guard blocks. An
// empty result means there is nothing to block.
func banned(allowed []string) []string {
	var out []string
	for _, t := range strings.Split(HandsOnTools, "|") {
		if !contains(allowed, t) {
			out = append(out, t)
		}
	}
	return out
}

// parseToolList splits a tool list given as "Read,Glob", "Read Glob" or
// "Read|Glob". A rule like "Bash(git log:*)" counts as its tool name.
func parseToolList(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '|' || r == ' ' }) {
		if i := strings.IndexByte(f, '('); i > 0 {
			f = f[:i]
		}
		out = append(out, f)
	}
	return out
}

// Whitelist is the whitelist guard (PreToolUse): a main-thread call of a
// hands-on tool that is not in allowed is denied. Subagents pass: their
// tools are set by their agent definition.
func Whitelist(in Input, allowed []string, role string) Decision {
	return whitelistIn(in, allowed, role, false, Sandboxing{})
}

// whitelistIn is Whitelist for a read-only role: with glance a Bash glance
// passes even when Bash is not allowed, and with sb.On every main-thread
// Bash call that runs does so in the read-only sandbox; an allowed Bash
// (a judge that may run the project's tests) gets the private scratch.
func whitelistIn(in Input, allowed []string, role string, glance bool, sb Sandboxing) Decision {
	if !in.IsMainThread() {
		return Decision{Verdict: Pass, Detail: map[string]any{"subagent": true}}
	}
	if role == "" {
		role = DefaultRole
	}
	banned := contains(banned(allowed), in.ToolName)
	if in.ToolName == "Bash" && !banned && sb.On {
		return sandboxed(in, sb, true, map[string]any{"allowed": true})
	}
	if in.ToolName == "Bash" && banned && glance {
		if d, ok := sb.glance(in); ok {
			return d
		}
	}
	if banned {
		return Decision{Verdict: Deny, Reason: WhitelistReason(role, in.ToolName)}
	}
	return Decision{Verdict: Pass}
}

// Isolate is the isolate guard (PreToolUse on Agent): an Agent call whose
// subagent_type is one of roles and whose input has neither isolation nor
// cwd is allowed with the whole original input plus "isolation":"worktree"
// (an explicit null or empty string counts as absent: a model does pass
// isolation null, and the subagent must still land in a
// worktree; only a real value the model chose is kept)
// (the CLI replaces the input wholesale and validates it, so a partial
// input would fail). Anything else passes untouched; so does input that is
// not an object (fail open).
func Isolate(in Input, roles []string) Decision {
	if in.ToolName != "Agent" {
		return Decision{Verdict: Pass}
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(in.ToolInput, &fields) != nil || fields == nil {
		return Decision{Verdict: Pass, Detail: map[string]any{"error": "tool_input is not an object"}}
	}
	var role string
	_ = json.Unmarshal(fields["subagent_type"], &role)
	if role == "" || !contains(roles, role) {
		return Decision{Verdict: Pass, Detail: map[string]any{"role": role}}
	}
	for _, k := range []string{"isolation", "cwd"} {
		if chosen(fields[k]) {
			return Decision{Verdict: Pass, Detail: map[string]any{"role": role, "respected": k}}
		}
		delete(fields, k) // null or "": the model chose nothing
	}
	fields["isolation"] = json.RawMessage(`"worktree"`)
	updated, err := json.Marshal(fields)
	if err != nil {
		return Decision{Verdict: Pass, Detail: map[string]any{"error": err.Error()}}
	}
	return Decision{Verdict: Allow, UpdatedInput: updated, Detail: map[string]any{"role": role, "isolation": "worktree"}}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// chosen reports whether raw is a value the model really chose: present,
// not null, not an empty (or blank) string.
func chosen(raw json.RawMessage) bool {
	if len(raw) == 0 || string(raw) == "null" {
		return false
	}
	var str string
	if json.Unmarshal(raw, &str) == nil && strings.TrimSpace(str) == "" {
		return false
	}
	return true
}
