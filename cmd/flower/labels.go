package main

import (
	"strings"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/internal/lazyre"
)

// Step names are the model-facing Chinese names (确认需求, 执行-评审#1); they
// stay so in events, documents and file names. A person at the terminal
// reads English labels instead, unless their locale is Chinese.

// englishLabels are the English labels of the starter flow's step names.
var englishLabels = map[string]string{
	flow.ClarifyStepName: "clarify",
	flow.GoalStepName:    "goal",
	flow.WorkStepName:    "work",
	flow.CoordinatorName: "coordinator",
}

// reviewSuffix is what flow's goal guard appends to a step's name for its
// judge (flow/goalguard.go: step.Name + "-评审").
const reviewSuffix = "-评审"

var reRound = lazyre.New(`^(.*)#(round|retry)?(\d+)$`)

// stepLabel is name as a person reads it: "review #1" for 执行-评审#1, "work
// round 2" for 执行#round2. zh keeps the Chinese name.
func stepLabel(name string, zh bool) string {
	if zh {
		return name
	}
	base, suffix := name, ""
	if m := reRound().FindStringSubmatch(name); m != nil {
		base = m[1]
		switch m[2] {
		case "":
			suffix = " #" + m[3]
		default:
			suffix = " " + m[2] + " " + m[3]
		}
	}
	switch {
	case englishLabels[base] != "":
		base = englishLabels[base]
	case strings.HasSuffix(base, reviewSuffix):
		owner := strings.TrimSuffix(base, reviewSuffix)
		base = "review"
		if l := englishLabels[owner]; owner != flow.WorkStepName && l != "" {
			base = l + " review"
		}
	}
	return base + suffix
}

// stepLabelBeside is the label with the step's own name beside it when they
// differ: "review #1 (执行-评审#1)", for tables a person may hold against
// events.jsonl.
func stepLabelBeside(name string, zh bool) string {
	l := stepLabel(name, zh)
	if l == name {
		return l
	}
	return l + " (" + name + ")"
}

// chineseLocale reports whether the person's locale is Chinese (LC_ALL,
// then LC_MESSAGES, then LANG, as gettext reads them).
func chineseLocale(getenv func(string) string) bool {
	for _, v := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if l := getenv(v); l != "" {
			return strings.HasPrefix(strings.ToLower(l), "zh")
		}
	}
	return false
}
