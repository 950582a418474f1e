package flow_test

import (
	"slices"
	"testing"

	"github.com/flowerhq/flower/scripted"
)

// starterRoles are the conversations of starterScript: every role the
// starter flow runs, the round judge and the coder subagent included.
var starterRoles = []string{"clarify", "goal", "coordinator", "worker", "judge"}

// rolesWithout lists the roles of starterRoles that sent no request, or a
// request whose model is not model.
func rolesWithout(reqs []scripted.Request, model string) []string {
	seen := map[string]bool{}
	var bad []string
	for _, r := range reqs {
		seen[r.Conversation] = true
		if r.Model() != model && slices.Contains(starterRoles, r.Conversation) && !slices.Contains(bad, r.Conversation) {
			bad = append(bad, r.Conversation)
		}
	}
	for _, role := range starterRoles {
		if !seen[role] {
			bad = append(bad, role+" (no request)")
		}
	}
	return bad
}

// StarterOptions.Model (flower --model) reaches every role, the round
// judge (with_goal's **spec_kw) included: asserted on the model name each
// request the real CLI sent carried.
func TestE2EModelReachesEveryRole(t *testing.T) {
	t.Parallel()
	const model = "claude-flower-model-probe"
	bed, srv, o := starterBed(t, []string{e2eNotYet, e2eAchieve}, []string{e2eGoal})
	o.Model = model
	runStarter(t, bed, "帮我写个 hello.txt", o)
	if bad := rolesWithout(srv.Requests(), model); len(bad) > 0 {
		for _, r := range srv.Requests() {
			t.Logf("%s: model %q", r.Conversation, r.Model())
		}
		t.Errorf("roles without model %q: %v", model, bad)
	}
	if n := len(srv.RequestsFor("judge")); n != 2 {
		t.Errorf("round judge requests = %d, want 2 (each round's judge carries the model)", n)
	}
	// Control: the same requests do not all carry another model name, so
	// the check above can fail.
	if bad := rolesWithout(srv.Requests(), "claude-other-model"); len(bad) != len(starterRoles) {
		t.Errorf("control: roles without another model = %v, want all %d", bad, len(starterRoles))
	}
}
