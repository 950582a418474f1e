package hooks

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// jsonStrings are strings whose encoding/json form the fast escaper must
// reproduce byte for byte.
var jsonStrings = []string{
	"", "plain", `quote " and backslash \`, "tab\tnl\nnl\rcr", "\b\f\x00\x01\x1f\x7f",
	"<script>&amp;</script>", "这个角色", "emoji 🌸", "\u2028 and \u2029", "bad \xff utf8 \xc3", "\xe2\x80",
	"mixed <\u2028\xfe\"\\é>", strings.Repeat("a", 1000) + "\x02",
}

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range jsonStrings {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range jsonStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	})
}

func TestMarshalOutputAndReportMatchEncodingJSON(t *testing.T) {
	in := Input{ToolName: "Bash", ToolUseID: "t<1>", SessionID: "s\"", AgentID: "\xff"}
	for _, d := range []Decision{
		{Verdict: Pass},
		{Verdict: Pass, Detail: map[string]any{"glance": true, "subagent": false, "role": "这个角色", "n": 3}},
		{Verdict: Deny, Reason: DelegateReason("Bash")},
		{Verdict: Deny, Reason: WhitelistReason(DefaultRole, "Write\n<&>")},
	} {
		for _, event := range []string{"PreToolUse", "", "é\u2028"} {
			want, _ := json.Marshal(d.Output(event))
			got, ok := marshalOutput(d.Output(event))
			if !ok || string(got) != string(want) {
				t.Errorf("output %+v %q: got %s %v, want %s", d, event, got, ok, want)
			}
		}
		r := newReport("delegate", in, d)
		want, _ := json.Marshal(r)
		if got, ok := marshalReport(r); !ok || string(got) != string(want) {
			t.Errorf("report %+v: got %s %v, want %s", d, got, ok, want)
		}
		r.Detail = nil
		want, _ = json.Marshal(r)
		if got, ok := marshalReport(r); !ok || string(got) != string(want) {
			t.Errorf("report nil detail: got %s %v, want %s", got, ok, want)
		}
	}
	// Control: what the fast path does not know goes to encoding/json.
	if _, ok := marshalReport(Report{Detail: map[string]any{"x": 1.5}}); ok {
		t.Error("marshalReport took a float detail")
	}
	if _, ok := marshalOutput(Decision{Verdict: Allow, UpdatedInput: json.RawMessage(`{}`)}.Output("PreToolUse")); ok {
		t.Error("marshalOutput took an updated input")
	}
}

// hookInputs are hook inputs the fast parser must read exactly as
// encoding/json does (or hand over to it).
var hookInputs = []string{
	benchInputInternal,
	`{"tool_name":"Bash","agent_id":"a1","tool_input":{"command":"ls"}}`,
	`{"tool_name":"Read","tool_name":"Bash"}`,
	`{"TOOL_NAME":"Bash","Agent_ID":"x"}`,
	`{"tool_name":"Bash","agent_id":null,"tool_input":null}`,
	`{"tool_name":"Ba\u0073h"}`,
	`{"tool_name":"B\"ash"}`,
	`{"tool_name":"é"}`,
	`{"tool_name":"Bash\xff"}`,
	`{"tool_name":1}`,
	`{"tool_name":["Bash"]}`,
	`{"tool_name":"Bash","agent_id":true}`,
	`{"tool_n\u0061me":"Bash"}`,
	`{"tool_name" : "Bash" , "tool_input" : { "command" : "rm -rf x" } , "tool_response" : [1,2] }`,
	`{"tool_name":"Bash",}`,
	`{"tool_name":"Bash"} x`,
	`{"tool_name":"Bash"}{}`,
	`{"tool_name":01}`,
	`{"tool_name":"Bash","x":1e999}`,
	`{"tool_name":"Bash","x":-}`,
	`{"tool_name":"Bash","x":"a` + "\x01" + `"}`,
	`{"tool_name":"Bash","x":[` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `]}`,
	`{"tool_name":"Bash"`,
	`{}`,
}

const benchInputInternal = `{"session_id":"9d3c5b1e-0000-4000-8000-000000000001","transcript_path":"/tmp/x.jsonl","cwd":"/tmp/ws","prompt_id":"p","permission_mode":"default","effort":{"level":"medium"},"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"make test","description":"run tests"},"tool_use_id":"toolu_0001_1"}`

func checkParseFast(t *testing.T, data string) {
	var want Input
	wantErr := json.Unmarshal([]byte(data), &want)
	got, ok := parseInputFast([]byte(data))
	if !ok {
		return // encoding/json decides
	}
	if wantErr != nil {
		t.Fatalf("%q: fast path accepted what encoding/json refuses (%v): %+v", data, wantErr, got)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: fast %+v, encoding/json %+v", data, got, want)
	}
}

func TestParseInputFastMatchesEncodingJSON(t *testing.T) {
	for _, data := range hookInputs {
		checkParseFast(t, data)
	}
	// Control: the everyday input takes the fast path.
	if _, ok := parseInputFast([]byte(benchInputInternal)); !ok {
		t.Error("the bench input did not take the fast path")
	}
}

func FuzzParseInputFast(f *testing.F) {
	for _, data := range hookInputs {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data string) {
		if !strings.HasPrefix(data, "{") {
			return
		}
		checkParseFast(t, data)
	})
}

// bashInputs are tool inputs whose command the fast reader must read
// exactly as encoding/json does (or hand over to it).
var bashInputs = []string{
	`{"command":"ls -la","description":"list"}`,
	`{"command":"grep \"x\" f\nwc -l"}`,
	`{"command":"echo 这个"}`,
	`{"command":"rm -rf x","command":"ls"}`,
	`{"COMMAND":"ls"}`,
	`{"command":"ls","command":null}`,
	`{"command":1}`,
	`{"command":"ls","x":[1,{"command":"rm"}]}`,
	`{"comm\u0061nd":"ls"}`,
	`{"command":"bad \xff"}`,
	`"ls"`, `null`, `[]`, `{}`, ``,
}

func FuzzBashCommandFast(f *testing.F) {
	for _, s := range bashInputs {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		if !json.Valid([]byte(data)) {
			return // tool_input is always part of a valid document
		}
		var v struct {
			Command *string `json:"command"`
		}
		wantOK := json.Unmarshal([]byte(data), &v) == nil && v.Command != nil
		cmd, found, fast := bashCommandFast([]byte(data))
		if !fast {
			return
		}
		if found != wantOK || wantOK && cmd != *v.Command {
			t.Fatalf("%q: fast %q %v, encoding/json %v %v", data, cmd, found, v.Command, wantOK)
		}
	})
}

func TestBashCommandFastTakesPlainCommands(t *testing.T) {
	if cmd, found, fast := bashCommandFast([]byte(bashInputs[0])); !fast || !found || cmd != "ls -la" {
		t.Errorf("got %q %v %v", cmd, found, fast)
	}
	if _, _, fast := bashCommandFast([]byte(bashInputs[1])); fast {
		t.Error("an escaped command took the fast path")
	}
}
