// Package k8scheck checks the Kubernetes manifests `bhasha cluster k8s`
// writes against Kubernetes' own types (k8s.io/api/batch/v1), decoded
// strictly: a field Kubernetes does not know, or of the wrong type, fails.
// It is a module of its own, so that the bhasha module does not carry
// k8s.io/api; `make test` runs it.
package k8scheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// generate runs `bhasha cluster k8s` from the bhasha module, over one of
// its smoke experiments, with the extra flags, and returns the directory
// of the job files.
func generate(t *testing.T, extra ...string) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	jobs := t.TempDir()
	args := append([]string{"-C", root, "run", "./cmd/bhasha", "cluster", "k8s",
		"--config", filepath.Join(root, "testdata", "experiments", "smoke-indicklar.yaml"),
		"--shards", "3", "--parallel", "2", "--out", "/data/grid", "--jobs", jobs}, extra...)
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		t.Fatalf("bhasha cluster k8s: %v\n%s", err, out)
	}
	return jobs
}

func decode(t *testing.T, path string) *batchv1.Job {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(b, &job); err != nil {
		t.Fatalf("%s is not a batch/v1 Job: %v\n%s", path, err, b)
	}
	return &job
}

func TestManifests(t *testing.T) {
	cases := []struct {
		name    string
		flags   []string
		sidecar bool
	}{
		{"vLLM beside each shard", nil, true},
		{"a gateway", []string{"--endpoint", "http://gateway.example:8000/v1"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			jobs := generate(t, c.flags...)
			job := decode(t, filepath.Join(jobs, "shards.yaml"))
			s := job.Spec
			if job.APIVersion != "batch/v1" || job.Kind != "Job" {
				t.Errorf("apiVersion %q kind %q", job.APIVersion, job.Kind)
			}
			if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion ||
				s.Completions == nil || *s.Completions != 3 || s.Parallelism == nil || *s.Parallelism != 2 || s.BackoffLimitPerIndex == nil {
				t.Errorf("spec %+v: want Indexed, 3 completions, parallelism 2, a backoff limit per index", s)
			}
			if p := s.PodFailurePolicy; p == nil || len(p.Rules) == 0 || p.Rules[0].Action != batchv1.PodFailurePolicyActionIgnore ||
				len(p.Rules[0].OnPodConditions) != 1 || p.Rules[0].OnPodConditions[0].Type != corev1.DisruptionTarget {
				t.Errorf("podFailurePolicy %+v: want disruptions ignored", p)
			}
			pod := s.Template.Spec
			if pod.RestartPolicy != corev1.RestartPolicyNever || len(pod.Volumes) != 1 || pod.Volumes[0].PersistentVolumeClaim == nil {
				t.Errorf("pod: restartPolicy %q, volumes %+v", pod.RestartPolicy, pod.Volumes)
			}
			if got := len(pod.InitContainers) == 1 && pod.InitContainers[0].RestartPolicy != nil &&
				*pod.InitContainers[0].RestartPolicy == corev1.ContainerRestartPolicyAlways; got != c.sidecar {
				t.Errorf("a vLLM sidecar: %v, want %v (%+v)", got, c.sidecar, pod.InitContainers)
			}
			decode(t, filepath.Join(jobs, "report.yaml"))
		})
	}
}
