package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
	"sigs.k8s.io/yaml"

	"github.com/flowerhq/flower/testkit/testbed"
)

// jobTemplate is the part of a batch/v1 Job the check reads.
type jobTemplate struct {
	Kind string `json:"kind"`
	Spec struct {
		BackoffLimit          *int `json:"backoffLimit"`
		ActiveDeadlineSeconds *int `json:"activeDeadlineSeconds"`
		Template              struct {
			Spec struct {
				InitContainers []container `json:"initContainers"`
				Containers     []container `json:"containers"`
			} `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

type container struct {
	Name      string   `json:"name"`
	Command   []string `json:"command"`
	Args      []string `json:"args"`
	Env       []envVar `json:"env"`
	Resources struct {
		Requests map[string]string `json:"requests"`
	} `json:"resources"`
}

type envVar struct {
	Name      string `json:"name"`
	Value     string `json:"value"`
	ValueFrom *struct {
		SecretKeyRef *struct{ Name, Key string } `json:"secretKeyRef"`
		FieldRef     *struct {
			FieldPath string `json:"fieldPath"`
		} `json:"fieldRef"`
	} `json:"valueFrom"`
}

// flowerCommand resolves args (after "flower") to the command they run and
// the flags before the first positional argument.
func flowerCommand(app *cli.App, args []string) (name string, flags []cli.Flag, rest []string) {
	name, flags = "flower", app.Flags
	cmds := app.Commands
	for len(args) > 0 {
		var sub *cli.Command
		for _, c := range cmds {
			if c.HasName(args[0]) {
				sub = c
			}
		}
		if sub == nil {
			break
		}
		name, flags, cmds, args = name+" "+sub.Name, sub.Flags, sub.Subcommands, args[1:]
	}
	return name, flags, args
}

var k8sVarRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// checkFlowerContainer returns what is wrong with one flower container.
func checkFlowerContainer(app *cli.App, c container) []string {
	var bad []string
	argv := append(slices.Clone(c.Command[1:]), c.Args...)
	name, flags, rest := flowerCommand(app, argv)
	known := map[string]bool{}
	envs := map[string]bool{}
	for _, f := range flags {
		for _, n := range f.Names() {
			known[n] = true
		}
		if ev, ok := f.(interface{ GetEnvVars() []string }); ok {
			for _, e := range ev.GetEnvVars() {
				envs[e] = true
			}
		}
	}
	defined := map[string]bool{}
	for _, e := range c.Env {
		defined[e.Name] = true
		if strings.HasPrefix(e.Name, "FLOWER_") && !envs[e.Name] {
			bad = append(bad, "env "+e.Name+" is no flag variable of `"+name+"`")
		}
	}
	for _, a := range rest {
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		flag := strings.TrimLeft(strings.SplitN(a, "=", 2)[0], "-")
		if !known[flag] {
			bad = append(bad, "flag "+a+" is not a flag of `"+name+"`")
		}
	}
	for _, a := range argv {
		for _, m := range k8sVarRef.FindAllStringSubmatch(a, -1) {
			if !defined[m[1]] {
				bad = append(bad, "argument "+a+" names $("+m[1]+"), which the container does not define")
			}
		}
	}
	return bad
}

// TestKubernetesJobTemplate parses every template in deploy/kubernetes and
// checks the flower Job against the command line it runs: every flag exists
// on that command, every FLOWER_* variable is one of its flags' variables,
// every $(VAR) in the arguments is defined; the store URL and the API key
// come from Secrets; a git clone init container, resource requests,
// backoffLimit and activeDeadlineSeconds are there. The control feeds the
// same check a template with a flag the command lacks and sees it fail.
func TestKubernetesJobTemplate(t *testing.T) {
	dir := filepath.Join(testbed.RepoRoot(t), "deploy", "kubernetes")
	data, err := os.ReadFile(filepath.Join(dir, "flow-job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var job jobTemplate
	if err := yaml.Unmarshal(data, &job); err != nil {
		t.Fatal(err)
	}
	app := NewApp(osEnv(nil, strings.NewReader(""), io.Discard, io.Discard))
	spec := job.Spec.Template.Spec
	if job.Kind != "Job" || job.Spec.BackoffLimit == nil || job.Spec.ActiveDeadlineSeconds == nil {
		t.Errorf("want a Job with backoffLimit and activeDeadlineSeconds: %+v", job.Spec)
	}
	if len(spec.InitContainers) == 0 || !slices.Contains(spec.InitContainers[0].Args, "clone") {
		t.Errorf("want a git clone init container, got %+v", spec.InitContainers)
	}
	var flower *container
	for i := range spec.Containers {
		if len(spec.Containers[i].Command) > 0 && spec.Containers[i].Command[0] == "flower" {
			flower = &spec.Containers[i]
		}
	}
	if flower == nil {
		t.Fatal("no container runs flower")
	}
	for _, bad := range checkFlowerContainer(app, *flower) {
		t.Error(bad)
	}
	checkRequestsAndSecrets(t, *flower)
	if !slices.Contains(flower.Args, "--json") {
		t.Errorf("an unattended flow prints --json: %v", flower.Args)
	}
	// Control: a drifted template fails the same check.
	drifted := *flower
	drifted.Args = append([]string{"--no-such-flag", "--store-url=x"}, flower.Args...)
	drifted.Env = append(slices.Clone(flower.Env), envVar{Name: "FLOWER_NO_SUCH"})
	if got := checkFlowerContainer(app, drifted); len(got) != 3 {
		t.Errorf("control: a drifted template gives %d complaints, want 3: %q", len(got), got)
	}
}

// checkRequestsAndSecrets: a flower container has cpu and memory requests,
// and takes the store URL and the API key from Secrets.
func checkRequestsAndSecrets(t *testing.T, c container) {
	t.Helper()
	if c.Resources.Requests["cpu"] == "" || c.Resources.Requests["memory"] == "" {
		t.Errorf("flower container without cpu/memory requests: %v", c.Resources.Requests)
	}
	fromSecret := map[string]bool{}
	for _, e := range c.Env {
		fromSecret[e.Name] = e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil
	}
	if !fromSecret["FLOWER_STORE"] || !fromSecret["ANTHROPIC_API_KEY"] {
		t.Errorf("the store URL and the API key must come from Secrets: %v", fromSecret)
	}
}
