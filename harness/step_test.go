package harness

import "testing"

// The handoff's writing round lifts the budget and keeps the turn limit.
func TestHandoffSpec(t *testing.T) {
	tests := []struct {
		name              string
		turns             int
		budget            float64
		wantTurns         int
		wantBudgetUnbound bool
	}{
		{"both set", 7, 0.25, 7, true},
		{"no turn limit", 0, 0.25, 0, true},
		{"no budget", 3, 0, 3, true},
	}
	for _, tt := range tests {
		spec := NewAgentSpec("w", "x")
		spec.MaxTurns, spec.MaxBudgetUSD = tt.turns, tt.budget
		got := handoffSpec(spec)
		if got.MaxTurns != tt.wantTurns || (got.MaxBudgetUSD == 0) != tt.wantBudgetUnbound {
			t.Errorf("%s: handoffSpec = turns %d, budget %v", tt.name, got.MaxTurns, got.MaxBudgetUSD)
		}
		if spec.MaxTurns != tt.turns || spec.MaxBudgetUSD != tt.budget {
			t.Errorf("%s: handoffSpec changed its argument", tt.name)
		}
	}
}

func TestJoinWords(t *testing.T) {
	for _, tt := range []struct{ a, b, want string }{
		{"", "", ""},
		{"stop", "", "stop"},
		{"", "stop", "stop"},
		{"stop", "stop", "stop"},
		{"stop", "go on", "stop\n\ngo on"},
	} {
		if got := joinWords(tt.a, tt.b); got != tt.want {
			t.Errorf("joinWords(%q, %q) = %q, want %q", tt.a, tt.b, got, tt.want)
		}
	}
}
