package main

import "testing"

func TestStepLabels(t *testing.T) {
	for _, tc := range []struct{ name, en string }{
		{"确认需求", "clarify"}, {"设定目标", "goal"}, {"执行", "work"}, {"执行-评审#1", "review #1"},
		{"执行-评审#12", "review #12"}, {"执行#round2", "work round 2"}, {"确认需求#retry1", "clarify retry 1"},
		{"确认需求-评审#2", "clarify review #2"}, {"plain", "plain"}, {"my step", "my step"}, {"协调者", "coordinator"},
	} {
		if got := stepLabel(tc.name, false); got != tc.en {
			t.Errorf("stepLabel(%q) = %q, want %q", tc.name, got, tc.en)
		}
		if got := stepLabel(tc.name, true); got != tc.name {
			t.Errorf("zh: stepLabel(%q) = %q", tc.name, got)
		}
	}
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{"LANG": "zh_CN.UTF-8"}, true}, {map[string]string{"LANG": "en_US.UTF-8"}, false},
		{map[string]string{"LC_ALL": "C", "LANG": "zh_CN"}, false}, {map[string]string{"LC_MESSAGES": "zh_TW"}, true}, {nil, false},
	} {
		if got := chineseLocale(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("chineseLocale(%v) = %v", tc.env, got)
		}
	}
}
