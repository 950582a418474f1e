package main

import (
	"testing"

	"github.com/flowerhq/flower/hooks"
)

func TestDenialLine(t *testing.T) {
	for _, tc := range []struct {
		r    hooks.Report
		want string
	}{
		{hooks.Report{Guard: "delegate", Tool: "Bash", Decision: hooks.Deny, Detail: map[string]any{"reason": "主线程只看,\n 请派子代理"}}, "flower: the delegate guard denied Bash: 主线程只看, 请派子代理"},
		{hooks.Report{Guard: "fence", Tool: "Write", Decision: hooks.Deny, Detail: map[string]any{}}, "flower: the fence guard denied Write"},
	} {
		if got := denialLine(tc.r); got != tc.want {
			t.Errorf("denialLine = %q, want %q", got, tc.want)
		}
	}
}
