package harness

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Handoff: five sections, only doing and next required.
func TestParseHandoff(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		want        Handoff
		missing     []string
		wantComplet bool
	}{
		{"all five", "## 在做什么\nD\n## 已定结论\nC\n## 走不通的路\nX\n## 下一步\nN\n## 现场\nS",
			Handoff{Doing: "D", Decided: "C", Deadends: "X", Next: "N", Scene: "S"}, nil, true},
		{"only doing and next are required", "## 在做什么\nD\n## 下一步\nN", Handoff{Doing: "D", Next: "N"}, nil, true},
		{"no next", "## 在做什么\nD\n## 走不通的路\nX", Handoff{Doing: "D", Deadends: "X"}, []string{"下一步"}, false},
		{"alias 正在做", "**正在做**\nD\n下一步: N", Handoff{Doing: "D", Next: "N"}, nil, true},
		{"placeholder (未填) counts as missing", "## 在做什么\nD\n## 下一步\n(未填)", Handoff{Doing: "D"}, []string{"下一步"}, false},
		{"unclosed fence drops the rest", "## 在做什么\nD\n```\n## 下一步\nN", Handoff{Doing: "D"}, []string{"下一步"}, false},
		{"first duplicate with content wins", "## 在做什么\nD\n## 下一步\nN\n## 下一步\nM", Handoff{Doing: "D", Next: "N"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseHandoff(tt.in, "")
			if got != tt.want {
				t.Errorf("ParseHandoff = %+v, want %+v", got, tt.want)
			}
			if m := got.Missing(); !reflect.DeepEqual(m, tt.missing) || got.Complete() != tt.wantComplet {
				t.Errorf("Missing = %v, Complete = %v", m, got.Complete())
			}
		})
	}
}

func TestHandoffDegradedAndRoundTrip(t *testing.T) {
	long := strings.Repeat("任", 1500)
	d := DegradedHandoff("执行", long, "超时")
	if n := len([]rune(d.Scene)); n != 1200 {
		t.Errorf("degraded scene has %d chars, want the first 1200", n)
	}
	if !d.Complete() || d.Step != "执行" || !strings.Contains(d.Doing, "超时") {
		t.Errorf("degraded = %+v", d)
	}
	notes := t.TempDir()
	if err := d.Write(notes); err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(notes, "交接-执行.md"); d.Path != want {
		t.Errorf("Write path = %s, want %s", d.Path, want)
	}
	back, err := LoadHandoff(d.Path)
	if err != nil || back.Doing != d.Doing || back.Next != d.Next || back.Scene != d.Scene || back.Step != "执行" || back.Path != d.Path {
		t.Errorf("LoadHandoff = %+v, %v", back, err)
	}
	if !strings.Contains(HandoffPrompt, "{used}") || !strings.Contains(HandoffPrompt, "{window}") {
		t.Error("HandoffPrompt lacks its {used}/{window} placeholders")
	}
	if pb := d.PromptBlock(); strings.Contains(pb, "走不通的路") {
		t.Errorf("PromptBlock shows an empty section:\n%s", pb)
	}
}
