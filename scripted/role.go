package scripted

import "fmt"
import "sort"
import "strings"

// Roles a script can match a conversation by (Match.Role): the starter
// flow's steps and its subagent type, told apart by the seed's Chinese
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

func validRole(role string) error {
	if s, _ := RoleMarker(role); role != "" && s == "" {
		return fmt.Errorf("role %q is not one of %s (match another subagent by its system prompt: system: …)", role, roleNames())
	}
	return nil
}
