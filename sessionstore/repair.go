package sessionstore

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"

	"github.com/tidwall/gjson"
)

// planPrune removes every permission denial but the last keep: the denied
// tool_result block and its tool_use block, and any line left empty.
func (p *plan) planPrune(keep int) {
	var denied []string
	for _, m := range p.sc.lines {
		if m.denial && !m.compact {
			for _, r := range m.results {
				denied = append(denied, r.id)
			}
		}
	}
	if len(denied) <= keep {
		return
	}
	for _, id := range denied[:len(denied)-keep] {
		p.dropBlock[id] = true
		p.rep.Pruned++
	}
	for i, m := range p.sc.lines {
		n := 0
		for _, u := range m.uses {
			if p.dropBlock[u.id] {
				n++
			}
		}
		for _, r := range m.results {
			if p.dropBlock[r.id] {
				n++
			}
		}
		if n > 0 && n == m.blocks {
			p.dropLine[i] = true
			p.rep.PrunedLines++
		}
	}
	p.relink()
}

func (p *plan) parentOf(i int) string {
	if np, ok := p.newParent[i]; ok {
		return np
	}
	return p.sc.lines[i].parent
}

// relink points every line whose parent was dropped at its nearest ancestor
// that stays, so the parentUuid chain the CLI follows on --resume is whole.
func (p *plan) relink() {
	dropped := map[string]string{}
	for i := range p.dropLine {
		if u := p.sc.lines[i].uuid; u != "" {
			dropped[u] = p.parentOf(i)
		}
	}
	if len(dropped) == 0 {
		return
	}
	for i, m := range p.sc.lines {
		if p.dropLine[i] || !m.hasParent {
			continue
		}
		up := p.parentOf(i)
		if _, ok := dropped[up]; !ok {
			continue
		}
		for n := 0; n <= len(dropped); n++ {
			next, ok := dropped[up]
			if !ok {
				break
			}
			up = next
		}
		p.newParent[i] = up
	}
}

// planRepair gives every tool_use without a tool_result a synthetic error
// result, placed the way the CLI places results: one user line per result,
// its parent the tool_use line, after the message's last line (or its last
// existing result). When the message has no result at all, the lines that
// continued from it continue from the last synthetic result instead.
func (p *plan) planRepair() {
	answered := map[string]int{}
	for i, m := range p.sc.lines {
		if m.typ != "user" || p.dropLine[i] {
			continue
		}
		for _, r := range m.results {
			if !p.dropBlock[r.id] {
				answered[r.id] = i
			}
		}
	}
	type group struct {
		key              string
		last, lastResult int
		orphans          []orphan
	}
	groups := map[string]*group{}
	var order []*group
	for i, m := range p.sc.lines {
		if m.typ != "assistant" || p.dropLine[i] {
			continue
		}
		key := m.msgID
		if key == "" {
			key = "#" + strconv.Itoa(i)
		}
		g := groups[key]
		if g == nil {
			g = &group{key: key, lastResult: -1}
			groups[key] = g
			order = append(order, g)
		}
		g.last = i
		for _, u := range m.uses {
			if p.dropBlock[u.id] {
				continue
			}
			if r, ok := answered[u.id]; ok {
				g.lastResult = max(g.lastResult, r)
			} else {
				g.orphans = append(g.orphans, orphan{i, u.id})
			}
		}
	}
	for _, g := range order {
		if len(g.orphans) == 0 {
			continue
		}
		at := max(g.last, g.lastResult)
		p.after[at] = append(p.after[at], g.orphans...)
		for _, o := range g.orphans {
			p.sources[o.line] = nil
		}
		p.rep.Repaired += len(g.orphans)
		from := p.sc.lines[g.last].uuid
		if g.lastResult >= 0 || from == "" {
			continue
		}
		to := repairUUID(g.orphans[len(g.orphans)-1].id)
		for i := g.last + 1; i < len(p.sc.lines); i++ {
			m := p.sc.lines[i]
			if p.dropLine[i] || !m.hasParent || m.typ == "assistant" && m.msgID == g.key || p.parentOf(i) != from {
				continue
			}
			p.newParent[i] = to
		}
	}
}

// syntheticUser is a tool-result user line in the CLI's own field order.
type syntheticUser struct {
	ParentUUID  string `json:"parentUuid"`
	IsSidechain bool   `json:"isSidechain"`
	UserType    string `json:"userType,omitempty"`
	Entrypoint  string `json:"entrypoint,omitempty"`
	CWD         string `json:"cwd,omitempty"`
	SessionID   string `json:"sessionId,omitempty"`
	Version     string `json:"version,omitempty"`
	GitBranch   string `json:"gitBranch,omitempty"`
	AgentID     string `json:"agentId,omitempty"`
	Type        string `json:"type"`
	Message     struct {
		Role    string                 `json:"role"`
		Content []syntheticResultBlock `json:"content"`
	} `json:"message"`
	UUID                    string `json:"uuid"`
	Timestamp               string `json:"timestamp,omitempty"`
	ToolUseResult           string `json:"toolUseResult"`
	SourceToolAssistantUUID string `json:"sourceToolAssistantUUID,omitempty"`
}

type syntheticResultBlock struct {
	Type      string `json:"type"`
	ToolUseID string `json:"tool_use_id"`
	Content   string `json:"content"`
	IsError   bool   `json:"is_error"`
}

// repairUUID is the uuid of the synthetic result for a tool_use id: derived
// from the id, so every load makes the same line and entries the CLI
// appends after a resume keep their parent.
func repairUUID(toolUseID string) string { return derivedUUID("flower-repair:" + toolUseID) }

// syntheticResult builds the repair line for the tool_use id in the
// assistant line raw.
func syntheticResult(raw []byte, toolUseID string) []byte {
	r := gjson.Parse(view(raw))
	uuid := r.Get("uuid").String()
	u := syntheticUser{
		ParentUUID:              uuid,
		IsSidechain:             r.Get("isSidechain").Bool(),
		UserType:                r.Get("userType").String(),
		Entrypoint:              r.Get("entrypoint").String(),
		CWD:                     r.Get("cwd").String(),
		SessionID:               r.Get("sessionId").String(),
		Version:                 r.Get("version").String(),
		GitBranch:               r.Get("gitBranch").String(),
		AgentID:                 r.Get("agentId").String(),
		Type:                    "user",
		UUID:                    repairUUID(toolUseID),
		Timestamp:               r.Get("timestamp").String(),
		ToolUseResult:           "Error: " + RepairText,
		SourceToolAssistantUUID: uuid,
	}
	u.Message.Role = "user"
	u.Message.Content = []syntheticResultBlock{{Type: "tool_result", ToolUseID: toolUseID, Content: RepairText, IsError: true}}
	out, _ := json.Marshal(u)
	return out
}

// derivedUUID is a version-4-shaped UUID made from a hash of seed.
func derivedUUID(seed string) string {
	h := sha256.Sum256([]byte(seed))
	h[6] = h[6]&0x0f | 0x40
	h[8] = h[8]&0x3f | 0x80
	x := hex.EncodeToString(h[:16])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}
