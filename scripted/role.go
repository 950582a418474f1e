package scripted

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/tidwall/gjson"
)

// Roles a script can match a conversation by (Match.Role): the starter
// flow's steps and its subagent type, told apart by the Chinese
// texts flower sends each of them (its system prompt rules and, for the two
// judge tasks, the first user message). cmd/flower's tests hold each marker
// against the flow package's texts, so the two cannot drift apart.
const (
	RoleClarify     = "clarify"
	RoleGoal        = "goal"
	RoleCoordinator = "coordinator"
	RoleCoder       = "coder" // the starter flow's subagent type (any worker subagent)
	RoleJudge       = "judge"
	RoleOracle      = "oracle"
)

// roleMarker is how a request shows its role: a substring of the system
// prompt and, when two roles share one, of the first user message.
type roleMarker struct {
	role, system, firstUser string
}

// roleMarkers are tried in order; the first that fits names the role.
var roleMarkers = []roleMarker{
	{RoleClarify, "你是需求澄清者", ""},
	{RoleCoordinator, "你是协调者", ""},
	{RoleCoder, "你是执行者", ""},
	{RoleGoal, "你是独立评审", "把它变成目标"},
	{RoleJudge, "你是独立评审", "请独立评审"},
	{RoleOracle, "你是旁路问答", ""},
}

// RoleMarker is the system prompt substring and, if any, the first user
// message substring that identify role ("" for an unknown role).
func RoleMarker(role string) (system, firstUser string) {
	for _, m := range roleMarkers {
		if m.role == role {
			return m.system, m.firstUser
		}
	}
	return "", ""
}

// Role is the request's role in a flower flow (RoleClarify, …), "" when it
// is none of them (a plain step, claude's helper requests, curl).
func (r Request) Role() string {
	system := r.System()
	first := ""
	for _, m := range roleMarkers {
		if !strings.Contains(system, m.system) {
			continue
		}
		if m.firstUser == "" {
			return m.role
		}
		if first == "" {
			first = r.FirstUser()
		}
		if strings.Contains(first, m.firstUser) {
			return m.role
		}
	}
	return ""
}

// roleNames lists the roles, for errors.
func roleNames() string {
	var names []string
	for _, m := range roleMarkers {
		names = append(names, m.role)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// subagentType is the allowlist of subagent type names a role may be
// besides the flower roles (claude's agent names: letters, digits, - and _).
var subagentType = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

func validRole(role string) error {
	if s, _ := RoleMarker(role); role != "" && s == "" && !subagentType.MatchString(role) {
		return fmt.Errorf("role %q is neither one of %s nor a subagent type (letters, digits, - and _)", role, roleNames())
	}
	return nil
}

// noteAgents remembers the subagent type of every Agent call in reply by
// its prompt: claude sends that prompt as the subagent's first user
// message, so the subagent's requests can be matched by their type.
func (s *Server) noteAgents(reply Reply) {
	for _, b := range reply.content() {
		if b.Name != "Agent" {
			continue
		}
		in := gjson.ParseBytes(b.Input)
		typ, prompt := in.Get("subagent_type").String(), strings.TrimSpace(in.Get("prompt").String())
		if typ == "" || prompt == "" {
			continue
		}
		s.mu.Lock()
		if s.agents == nil {
			s.agents = map[string]string{}
		}
		s.agents[prompt] = typ
		s.mu.Unlock()
	}
}

// agentOf is the subagent type of the Agent call whose prompt is r's first
// user message (claude's reminders aside), "" when no scripted call started it.
func (s *Server) agentOf(r Request) string {
	first := strings.TrimSpace(withoutReminders(r.FirstUser()))
	if first == "" {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agents[first]
}
