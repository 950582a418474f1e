package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/sessionstore"
)

// TestStep_RunsTheRolesSpec: `flower step --role R` runs the role's spec
// (stepRoles, with --max-turns and --max-budget-usd over the role's) on the
// factory's runtime, with the prompt, the step name and the resume options
// as given, and prints the step's text. Control: a role the command built
// differently (another --model) gives another spec, so the comparison can
// fail.
func TestStep_RunsTheRolesSpec(t *testing.T) {
	for _, role := range []string{"plain", "worker", "clarify", "judge", "oracle", "coordinator"} {
		t.Run(role, func(t *testing.T) {
			ws := t.TempDir()
			e, out, errb := testEnv("")
			rts := fakeFactory(t, e, func(string, harness.AgentSpec, string) harness.StepResult {
				return harness.StepResult{OK: true, Text: "the answer"}
			})
			code := run(context.Background(), e, []string{"flower", "step", "-C", ws, "--role", role, "--model", "m1", "--name", "s1",
				"--max-turns", "7", "--max-budget-usd", "0.5", "--resume", "sid-0", "--workbench", "-C", ws, "what now?"})
			if code != exitOK || out.String() != "the answer\n" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errb)
			}
			if len(*rts) != 1 || len((*rts)[0].calls) != 1 {
				t.Fatalf("runtimes %d", len(*rts))
			}
			rt, call := (*rts)[0], (*rts)[0].calls[0]
			want := stepRoles[role](flow.RoleOptions{Model: "m1"})
			want.MaxTurns, want.MaxBudgetUSD = 7, 0.5
			if !reflect.DeepEqual(call.Spec, want) {
				t.Errorf("spec\n %+v\nwant\n %+v", call.Spec, want)
			}
			other := stepRoles[role](flow.RoleOptions{Model: "m2"})
			other.MaxTurns, other.MaxBudgetUSD = 7, 0.5
			if reflect.DeepEqual(call.Spec, other) {
				t.Errorf("control: the spec of --model m2 equals the spec of --model m1")
			}
			if call.Prompt != "what now?" || call.Step != "s1" || call.Opts.Resume != "sid-0" {
				t.Errorf("prompt %q, step %q, resume %q", call.Prompt, call.Step, call.Opts.Resume)
			}
			if rt.opts.Workspace != ws || rt.opts.Workbench == nil || rt.opts.RunDir != filepath.Join(ws, ".flower", "runs") {
				t.Errorf("runtime options %+v", rt.opts)
			}
			if strings.Contains(errb.String(), "no delegate guard") {
				t.Errorf("warned with --workbench: %q", errb)
			}
		})
	}
}

// TestStep_OutcomeAndJSON: --json prints the step's events and the
// step_result last; a step that fails exits 1 naming its error; a usage
// error builds no runtime. The OK row is the control of the failing one.
func TestStep_OutcomeAndJSON(t *testing.T) {
	for _, tc := range []struct {
		name   string
		res    harness.StepResult
		args   []string
		code   int
		stderr string
		built  int
	}{
		{"ok", harness.StepResult{OK: true, Text: "fine"}, []string{"--json", "go"}, exitOK, "", 1},
		{"failed", harness.StepResult{Error: "boom"}, []string{"--json", "go"}, exitFailed, "flower: step plain failed: boom\n", 1},
		{"unknown role", harness.StepResult{OK: true}, []string{"--role", "boss", "go"}, exitUsage, "unknown --role \"boss\"", 0},
		{"empty prompt", harness.StepResult{OK: true}, []string{" "}, exitUsage, "empty prompt", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, out, errb := testEnv("")
			rts := fakeFactory(t, e, func(string, harness.AgentSpec, string) harness.StepResult { return tc.res })
			code := run(context.Background(), e, append([]string{"flower", "step", "-C", t.TempDir()}, tc.args...))
			if code != tc.code || !strings.Contains(errb.String(), tc.stderr) || len(*rts) != tc.built {
				t.Fatalf("exit %d, stderr %q, %d runtimes; want %d, %q, %d", code, errb, len(*rts), tc.code, tc.stderr, tc.built)
			}
			if tc.built == 0 {
				return
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			last := gjson.Parse(lines[len(lines)-1])
			if gjson.Get(lines[0], "kind").String() != harness.EventStepStart || last.Get("kind").String() != "step_result" ||
				last.Get("ok").Bool() != tc.res.OK || last.Get("error").String() != tc.res.Error || last.Get("session_id").String() != "sid-plain" {
				t.Errorf("stdout:\n%s", out)
			}
		})
	}
}

// TestStep_WarnsOfADelegateRoleWithoutWorkbench: a delegate-only role
// without --workbench runs with no delegate guard, and says so on stderr.
// Control: the plain role says nothing.
func TestStep_WarnsOfADelegateRoleWithoutWorkbench(t *testing.T) {
	for role, warns := range map[string]bool{"coordinator": true, "plain": false} {
		e, _, errb := testEnv("")
		fakeFactory(t, e, nil)
		if code := run(context.Background(), e, []string{"flower", "step", "-C", t.TempDir(), "--role", role, "go"}); code != exitOK {
			t.Fatalf("%s: exit %d %s", role, code, errb)
		}
		if got := strings.Contains(errb.String(), "--role "+role+" without --workbench runs with no delegate guard"); got != warns {
			t.Errorf("%s: stderr %q", role, errb)
		}
	}
}

// TestStep_StoreOpenFailureStopsTheStep: a --store that cannot be opened
// ends the step with that one line before any runtime exists or the run
// dir is made. Control: TestStep_RunsTheRolesSpec (the default store).
func TestStep_StoreOpenFailureStopsTheStep(t *testing.T) {
	ws := t.TempDir()
	e, out, errb := testEnv("")
	rts := fakeFactory(t, e, nil)
	e.OpenStore = func(context.Context, string, harness.StoreOptions) (*sessionstore.Store, error) {
		return nil, errors.New("sessionstore: open /nowhere/s.db: no such file or directory")
	}
	code := run(context.Background(), e, []string{"flower", "step", "-C", ws, "--store", "/nowhere/s.db", "go"})
	if code != exitFailed || errb.String() != "flower: open /nowhere/s.db: no such file or directory\n" || out.Len() != 0 || len(*rts) != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q, %d runtimes", code, out, errb, len(*rts))
	}
	if _, err := os.Stat(filepath.Join(ws, ".flower")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused step made %s/.flower (%v)", ws, err)
	}
}

// TestStep_SandboxForGlancingRoles: `flower step --sandbox` probes the
// sandbox and turns it on only for a role whose main thread glances (a
// look-only role): --sandbox=require refuses a judge step where the probe
// fails, while a plain step neither probes nor refuses. An unknown mode is
// a usage error. Control: with a probe that passes, the judge's runtime
// gets the sandbox on.
func TestStep_SandboxForGlancingRoles(t *testing.T) {
	for _, tc := range []struct {
		role, mode string
		probe      error
		code       int
		probed     int
		sandbox    bool
		stderr     string
	}{
		{"judge", "require", errors.New("no bwrap"), exitFailed, 1, false, "--sandbox=require: no bwrap"},
		{"judge", "auto", nil, exitOK, 1, true, ""},
		{"clarify", "auto", errors.New("no bwrap"), exitOK, 1, false, "look-only rests on the classifier alone"},
		{"plain", "require", errors.New("no bwrap"), exitOK, 0, true, ""},
		{"plain", "sometimes", nil, exitUsage, 0, false, `--sandbox "sometimes"`},
	} {
		t.Run(tc.role+"-"+tc.mode, func(t *testing.T) {
			e, _, errb := testEnv("")
			probed := 0
			e.SandboxCheck = func() error { probed++; return tc.probe }
			rts := fakeFactory(t, e, nil)
			code := run(context.Background(), e, []string{"flower", "step", "-C", t.TempDir(), "--role", tc.role, "--sandbox", tc.mode, "go"})
			if code != tc.code || probed != tc.probed || !strings.Contains(errb.String(), tc.stderr) {
				t.Fatalf("exit %d, probed %d, stderr %q; want %d, %d, %q", code, probed, errb, tc.code, tc.probed, tc.stderr)
			}
			if code == exitOK && (*rts)[0].opts.Sandbox != tc.sandbox {
				t.Errorf("runtime sandbox %v, want %v", (*rts)[0].opts.Sandbox, tc.sandbox)
			}
		})
	}
}

// TestStep_JudgeIsTyped: `flower step --role judge` runs with the typed
// verdict's schema, as every judge round of a flow does. Control: the
// plain role has none.
func TestStep_JudgeIsTyped(t *testing.T) {
	if got := stepRoles["judge"](flow.RoleOptions{}).JSONSchema; got != flow.VerdictSchema {
		t.Errorf("judge schema %q", got)
	}
	if got := stepRoles["plain"](flow.RoleOptions{}).JSONSchema; got != "" {
		t.Errorf("control: plain schema %q", got)
	}
}

// TestStep_PrintsTheTypedAnswer: a step with a typed answer (a judge's
// verdict) prints its words, then the value on one line, as `claude -p
// --json-schema` prints it. Control: a step without one prints its words
// alone.
func TestStep_PrintsTheTypedAnswer(t *testing.T) {
	for _, tc := range []struct {
		structured string
		want       string
	}{
		{"{\n \"verdict\": \"achieved\"\n}", "words\n{\"verdict\":\"achieved\"}\n"},
		{"", "words\n"},
	} {
		e, out, errb := testEnv("")
		fakeFactory(t, e, func(string, harness.AgentSpec, string) harness.StepResult {
			return harness.StepResult{OK: true, Text: "words", Structured: []byte(tc.structured)}
		})
		if code := run(context.Background(), e, []string{"flower", "step", "-C", t.TempDir(), "--role", "judge", "go"}); code != exitOK || out.String() != tc.want {
			t.Errorf("exit %d, stdout %q, want %q (stderr %q)", code, out, tc.want, errb)
		}
	}
}
