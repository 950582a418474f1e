package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/flowerhq/flower/testkit/testbed"
)

// workerDeployment is the part of an apps/v1 Deployment the check reads.
type workerDeployment struct {
	Kind string `json:"kind"`
	Spec struct {
		Replicas *int `json:"replicas"`
		Template struct {
			Spec struct {
				TerminationGracePeriodSeconds *int `json:"terminationGracePeriodSeconds"`
				Containers                    []struct {
					container
					Lifecycle struct {
						PreStop *struct {
							Exec struct {
								Command []string `json:"command"`
							} `json:"exec"`
						} `json:"preStop"`
					} `json:"lifecycle"`
				} `json:"containers"`
			} `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

// TestKubernetesWorkerDeployment checks deploy/kubernetes/worker-deployment.yaml
// against `flower worker`: every flag and FLOWER_* variable exists, every
// $(VAR) is defined; replicas, resource requests, the store URL and the API
// key from Secrets, a preStop, and a termination grace period longer than
// the worker's --grace. The control: the same check on the container with a
// flag the worker lacks fails.
func TestKubernetesWorkerDeployment(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testbed.RepoRoot(t), "deploy", "kubernetes", "worker-deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var d workerDeployment
	if err := yaml.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	spec := d.Spec.Template.Spec
	if d.Kind != "Deployment" || d.Spec.Replicas == nil || len(spec.Containers) != 1 {
		t.Fatalf("want a Deployment with replicas and one container: %+v", d)
	}
	c := spec.Containers[0]
	app := NewApp(osEnv(nil, strings.NewReader(""), io.Discard, io.Discard))
	if len(c.Command) == 0 || c.Command[0] != "flower" || len(c.Args) == 0 || c.Args[0] != "worker" {
		t.Fatalf("the container does not run flower worker: %v %v", c.Command, c.Args)
	}
	for _, bad := range checkFlowerContainer(app, c.container) {
		t.Error(bad)
	}
	checkRequestsAndSecrets(t, c.container)
	if c.Lifecycle.PreStop == nil || len(c.Lifecycle.PreStop.Exec.Command) == 0 {
		t.Error("no preStop hook")
	}
	grace := 5 * time.Minute // the worker's default
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--grace="); ok {
			if grace, err = time.ParseDuration(v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if spec.TerminationGracePeriodSeconds == nil || time.Duration(*spec.TerminationGracePeriodSeconds)*time.Second <= grace {
		t.Errorf("terminationGracePeriodSeconds %v does not outlast --grace %s: the kubelet would kill flows before they are handed back",
			spec.TerminationGracePeriodSeconds, grace)
	}
	drifted := c.container
	drifted.Args = append(slices.Clone(c.Args), "--no-such-flag")
	if got := checkFlowerContainer(app, drifted); len(got) != 1 {
		t.Errorf("control: a drifted worker gives %d complaints, want 1: %q", len(got), got)
	}
}
