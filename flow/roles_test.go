package flow

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flowerhq/flower/harness"
)

func TestCoordinator(t *testing.T) {
	ch := &fakeChannel{}
	workers := map[string]harness.AgentDefinition{
		"coder":  Worker("codes", "p", WorkerOptions{Isolate: true}),
		"reader": Worker("reads", "p", WorkerOptions{Tools: []string{"Read", "WebSearch"}}),
	}
	s := Coordinator("协调者", "多写测试", workers, ch, RoleOptions{})
	if !s.DelegateOnly || !s.Workbench || !s.Glance || s.PermissionMode != "acceptEdits" {
		t.Errorf("fixed fields: %+v", s)
	}
	if !reflect.DeepEqual(s.Agents, workers) || !s.Agents["coder"].Isolate {
		t.Errorf("agents = %+v (the isolation mark must survive)", s.Agents)
	}
	for _, h := range handsOn {
		if slices.Contains(s.AllowedTools, h) {
			t.Errorf("%s merged into the coordinator's allowed tools", h)
		}
	}
	if !strings.HasPrefix(s.Instructions, CoordinatorRules) || !strings.Contains(s.Instructions, "多写测试") {
		t.Errorf("instructions = %q", s.Instructions)
	}
	if s.MCPServers["fake"] == nil {
		t.Error("channel MCP server not wired")
	}
	bare := Coordinator("c", "", nil, nil, RoleOptions{NoRead: true, NoGlance: true, PermissionMode: "default", Model: "m", MaxTurns: 7})
	if bare.Glance || bare.PermissionMode != "default" || bare.Model != "m" || bare.MaxTurns != 7 {
		t.Errorf("bare coordinator = %+v", bare)
	}
}

// The coordinator's tool set is exactly Agent, TodoWrite and Read, the
// workers' web tools merged in, the channel's two tools; never Glob/Grep or a
// hands-on tool.
func TestCoordinatorTools(t *testing.T) {
	ch := &fakeChannel{}
	coder := Worker("codes", "p", WorkerOptions{})
	reader := Worker("reads", "p", WorkerOptions{Tools: []string{"Read", "WebSearch"}})
	bash := Worker("runs", "p", WorkerOptions{Tools: []string{"Bash", "Write"}})
	tests := []struct {
		name    string
		workers map[string]harness.AgentDefinition
		ch      Channel
		o       RoleOptions
		want    []string
	}{
		{"bare: COORDINATOR_TOOLS", nil, nil, RoleOptions{}, []string{"Agent", "TodoWrite", "Read"}},
		{"can_read=False drops Read", nil, nil, RoleOptions{NoRead: true}, []string{"Agent", "TodoWrite"}},
		{"channel adds ask and inbox", nil, ch, RoleOptions{}, []string{"Agent", "TodoWrite", "Read", "mcp__fake__ask", "mcp__fake__inbox"}},
		{"a full worker's web tools are merged", map[string]harness.AgentDefinition{"coder": coder}, nil, RoleOptions{}, []string{"Agent", "TodoWrite", "Read", "WebFetch", "WebSearch"}},
		{"only the web tools a worker has", map[string]harness.AgentDefinition{"reader": reader}, nil, RoleOptions{}, []string{"Agent", "TodoWrite", "Read", "WebSearch"}},
		{"hands-on tools never merged", map[string]harness.AgentDefinition{"bash": bash}, nil, RoleOptions{}, []string{"Agent", "TodoWrite", "Read"}},
		{"starter wiring", map[string]harness.AgentDefinition{"coder": coder}, ch, RoleOptions{}, []string{"Agent", "TodoWrite", "Read", "WebFetch", "WebSearch", "mcp__fake__ask", "mcp__fake__inbox"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Coordinator("c", "", tt.workers, tt.ch, tt.o).AllowedTools
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("allowed = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWorker(t *testing.T) {
	w := Worker("d", "do it", WorkerOptions{})
	if !reflect.DeepEqual(w.Tools, workerTools) || w.Model != "inherit" || w.Isolate || !strings.HasPrefix(w.Prompt, WorkerRules) || !strings.HasSuffix(w.Prompt, "do it") {
		t.Errorf("worker = %+v", w)
	}
	w.Tools[0] = "X"
	if workerTools[0] != "Read" {
		t.Error("Worker shares the WORKER_TOOLS slice")
	}
	if raw := Worker("d", "do it", WorkerOptions{NoDiscipline: true, Isolate: true}); raw.Prompt != "do it" || !raw.Isolate {
		t.Errorf("raw worker = %+v", raw)
	}
	marked := Worker("d", "p", WorkerOptions{Isolate: true})
	cp := marked
	cp.Description = "changed"
	if !harness.WantsIsolation(&cp) {
		t.Error("copying a definition lost the isolation mark")
	}
}

func TestClarifyJudgeOracle(t *testing.T) {
	ch := &fakeChannel{}
	tests := []struct {
		name      string
		spec      harness.AgentSpec
		allowed   []string
		workbench bool
		rules     string
	}{
		{"clarify reads", Clarify("c", ch, RoleOptions{}), []string{"mcp__fake__ask", "Read", "Glob", "Grep", "WebFetch", "WebSearch"}, false, ClarifyRules},
		{"clarify no read", Clarify("c", ch, RoleOptions{NoRead: true}), []string{"mcp__fake__ask"}, false, ClarifyRules},
		{"judge", Judge("j", ch, RoleOptions{}), []string{"mcp__fake__ask", "Read", "Glob", "Grep"}, false, JudgeRules},
		{"judge can run", Judge("j", ch, RoleOptions{CanRun: true}), []string{"mcp__fake__ask", "Read", "Glob", "Grep", "Bash"}, false, JudgeRules},
		{"oracle", Oracle("", RoleOptions{}), []string{"Read", "Glob", "Grep"}, true, OracleRules},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.spec.AllowedTools, tt.allowed) {
				t.Errorf("allowed = %v, want %v", tt.spec.AllowedTools, tt.allowed)
			}
			for _, banned := range []string{"Write", "Edit", "Agent", "mcp__fake__inbox"} {
				if slices.Contains(tt.spec.AllowedTools, banned) {
					t.Errorf("%s allowed", banned)
				}
			}
			if tt.spec.Workbench != tt.workbench || tt.spec.DelegateOnly || tt.spec.PermissionMode != "default" {
				t.Errorf("fields = %+v", tt.spec)
			}
			if !strings.HasPrefix(tt.spec.Instructions, tt.rules) {
				t.Error("rule text not injected")
			}
		})
	}
	o := Oracle("", RoleOptions{})
	if o.Name != "旁路问答" || o.MaxTurns != 12 || o.MaxBudgetUSD != 0.5 || o.MCPServers != nil {
		t.Errorf("oracle = %+v", o)
	}
	// The oracle's limits can be set and lifted, as oracle(max_turns=None,
	// max_budget_usd=None) does.
	if o := Oracle("", RoleOptions{MaxTurns: NoLimit, MaxBudgetUSD: NoLimit}); o.MaxTurns != 0 || o.MaxBudgetUSD != 0 {
		t.Errorf("lifted oracle limits = %d turns, $%v", o.MaxTurns, o.MaxBudgetUSD)
	}
	if o := Oracle("", RoleOptions{MaxTurns: 30, MaxBudgetUSD: 2}); o.MaxTurns != 30 || o.MaxBudgetUSD != 2 {
		t.Errorf("set oracle limits = %d turns, $%v", o.MaxTurns, o.MaxBudgetUSD)
	}
	if c := Clarify("c", ch, RoleOptions{}); c.MCPServers["fake"] == nil {
		t.Error("clarify without the channel's MCP server")
	}
}

// The five rule texts say what each role must (not) do.
func TestRuleTexts(t *testing.T) {
	tests := []struct {
		name string
		text string
		must []string
	}{
		{"coordinator", CoordinatorRules, []string{"Agent", "目标", "验收标准", "artifacts/", "Bash", "不是配置遗漏", "inbox"}},
		{"worker", WorkerRules, []string{"每改一处就跑一次验证", "汇报"}},
		{"clarify", ClarifyRules, []string{"只提问", "ask", "## 目标", "## 验收标准", "## 边界", "## 未知与假设"}},
		{"judge", JudgeRules, []string{"先弄清楚你在什么环境里", "[此环境无法验证:", "## 结论", "## 理由", "## 未通过", "无法验证"}},
		{"oracle", OracleRules, []string{"只读", "工作台"}},
	}
	for _, tt := range tests {
		for _, m := range tt.must {
			if !strings.Contains(tt.text, m) {
				t.Errorf("%s rules lack %q", tt.name, m)
			}
		}
	}
	if strings.Contains(WorkerRules, ".flower") {
		t.Error("WorkerRules must not hard-code the workbench path")
	}
	// The judge's own format must parse with the documents' rules.
	if b := ParseBrief(ClarifyRules[strings.Index(ClarifyRules, "## 目标"):]); !b.Complete() {
		t.Errorf("ClarifyRules' four headings do not parse: %+v", b)
	}
}
