package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/sim"
	"github.com/bhashalab/bhasha/sim/simtest"
)

// fakeBin writes a bin directory holding a bhasha that is this test
// binary, and the other programs given (name → shell script body), and
// returns the PATH that finds them first.
func fakeBin(t *testing.T, scripts map[string]string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	scripts["bhasha"] = fmt.Sprintf("BHASHA_AS_CLI=1 exec %s \"$@\"", quote(os.Args[0]))
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return bin + string(os.PathListSeparator) + os.Getenv("PATH")
}

// complete fails unless dir is a complete run of shard spec.
func complete(t *testing.T, dir, spec string) {
	t.Helper()
	m, err := run.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != "complete" || m.Shard != spec || m.Counts.Records == 0 {
		t.Errorf("%s: status %q shard %q, %d records; want a complete shard %s", dir, m.Status, m.Shard, m.Counts.Records, spec)
	}
}

// The Slurm job array's script, run as array task 12 of an array from 10,
// starts the server beside it, waits for its health, and runs its shard
// into the grid; the report script reports the grid (one shard of three,
// partial); a changed experiment stops
// the task before anything runs.
func TestClusterSlurm(t *testing.T) {
	dir := t.TempDir()
	cfg := writeTwoModels(t, dir, 12)
	grid, jobs := filepath.Join(dir, "grid"), filepath.Join(dir, "jobs")
	args := []string{"cluster", "slurm", "--config", cfg, "--shards", "3", "--parallel", "2", "--out", grid, "--jobs", jobs,
		"--server-cmd", "bhasha sim --addr 127.0.0.1:{port} --config " + cfg, "--wait", "60"}
	var so, se bytes.Buffer
	if err := dispatch(context.Background(), args, &so, &se); err != nil {
		t.Fatalf("%v\n%s", err, se.String())
	}
	b, err := os.ReadFile(filepath.Join(jobs, "shards.sbatch"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#SBATCH --array=0-2%2", "#SBATCH --requeue", "#SBATCH --signal=B:TERM@120", "--shard auto", "/health"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("shards.sbatch has no %q:\n%s", want, b)
		}
	}
	if sub, _ := os.ReadFile(filepath.Join(jobs, "submit.sh")); !bytes.Contains(sub, []byte("--dependency=afterok:")) {
		t.Errorf("submit.sh:\n%s", sub)
	}
	path := fakeBin(t, map[string]string{})
	task := func() ([]byte, error) {
		c := exec.Command("bash", filepath.Join(jobs, "shards.sbatch"))
		c.Env = append(os.Environ(), "PATH="+path, "SLURM_ARRAY_TASK_ID=12", "SLURM_ARRAY_TASK_MIN=10", "SLURM_ARRAY_TASK_COUNT=3")
		c.Dir = dir
		return c.CombinedOutput()
	}
	if out, err := task(); err != nil {
		t.Fatalf("array task: %v\n%s", err, out)
	}
	complete(t, filepath.Join(grid, "shard-002-of-003"), "2/3")
	rep := exec.Command("bash", filepath.Join(jobs, "report.sbatch"))
	rep.Env = append(os.Environ(), "PATH="+path)
	if out, err := rep.CombinedOutput(); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(grid, "report.html")); err != nil {
		t.Errorf("no report: %v", err)
	}
	// The layout follows the experiment: a task of a changed one stops.
	if err := os.WriteFile(cfg, append(must(os.ReadFile(cfg)), "# edited\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(grid)
	if out, err := task(); err == nil || !strings.Contains(string(out), "changed since its job files were written") {
		t.Errorf("a task of a changed experiment: %v\n%s", err, out)
	}
	if _, err := os.Stat(grid); !os.IsNotExist(err) {
		t.Errorf("a stopped task wrote %s", grid)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// podSpec reads the pod template of a Job manifest.
func podSpec(t *testing.T, path string) map[string]any {
	t.Helper()
	var job map[string]any
	if err := yaml.Unmarshal(must(os.ReadFile(path)), &job); err != nil {
		t.Fatal(err)
	}
	return job["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
}

// containerCmd is the sh -c script of a pod's container (or init
// container) named name.
func containerCmd(t *testing.T, pod map[string]any, list, name string) string {
	t.Helper()
	for _, c := range pod[list].([]any) {
		c := c.(map[string]any)
		if c["name"] == name {
			cmd := c["command"].([]any)
			return cmd[len(cmd)-1].(string)
		}
	}
	t.Fatalf("no %s %s in %v", list, name, pod)
	return ""
}

// The Indexed Job's bhasha container, run with JOB_COMPLETION_INDEX set,
// runs that shard into the grid; the vLLM container beside it serves the
// shard's model; an experiment with a judge needs a gateway.
func TestClusterK8s(t *testing.T) {
	dir := t.TempDir()
	cfg := writeTwoModels(t, dir, 12)
	grid := filepath.Join(dir, "grid")
	url := simtest.Start(t, sim.Config{})
	gen := func(jobs string, extra ...string) error {
		args := append([]string{"cluster", "k8s", "--config", cfg, "--shards", "3", "--out", grid, "--jobs", jobs}, extra...)
		return dispatch(context.Background(), args, &bytes.Buffer{}, &bytes.Buffer{})
	}
	gw := filepath.Join(dir, "gateway")
	if err := gen(gw, "--endpoint", url); err != nil {
		t.Fatal(err)
	}
	pod := podSpec(t, filepath.Join(gw, "shards.yaml"))
	if _, ok := pod["initContainers"]; ok {
		t.Errorf("a gateway's job runs a server beside each shard")
	}
	c := exec.Command("sh", "-c", containerCmd(t, pod, "containers", "bhasha"))
	c.Env = append(os.Environ(), "PATH="+fakeBin(t, map[string]string{}), "JOB_COMPLETION_INDEX=1")
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("the bhasha container: %v\n%s", err, out)
	}
	complete(t, filepath.Join(grid, "shard-001-of-003"), "1/3")

	local := filepath.Join(dir, "local")
	if err := gen(local); err != nil {
		t.Fatal(err)
	}
	pod = podSpec(t, filepath.Join(local, "shards.yaml"))
	served := filepath.Join(dir, "served")
	// Equal requests: the odd shard goes to the first model.
	for k, want := range []string{"sim-tiny-1b", "sim-tiny-1b", "sim-base-8b"} {
		v := exec.Command("sh", "-c", containerCmd(t, pod, "initContainers", "vllm"))
		v.Env = append(os.Environ(), "PATH="+fakeBin(t, map[string]string{"vllm": "echo \"$@\" > " + quote(served)}), fmt.Sprintf("JOB_COMPLETION_INDEX=%d", k))
		if out, err := v.CombinedOutput(); err != nil {
			t.Fatalf("the vllm container of shard %d: %v\n%s", k, err, out)
		}
		if got := strings.TrimSpace(string(must(os.ReadFile(served)))); got != "serve "+want+" --port 8000" {
			t.Errorf("shard %d: vllm %s, want serve %s", k, got, want)
		}
	}

	judged := filepath.Join(dir, "judged.yaml")
	y := strings.Replace(string(must(os.ReadFile(cfg))), "decoding:", "judge: {name: judge, served_name: sim-base-8b, endpoints: [\"http://127.0.0.1:1/v1\"]}\ndecoding:", 1)
	if err := os.WriteFile(judged, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	refused := filepath.Join(dir, "refused")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"cluster", "k8s", "--config", judged, "--shards", "3", "--out", grid, "--jobs", refused}, "names a judge (judge)"},
		{[]string{"cluster", "slurm", "--config", cfg, "--shards", "1", "--out", grid, "--jobs", refused}, "at least 2 shards"},
		{[]string{"cluster", "k8s", "--config", cfg, "--shards", "3", "--out", "grid", "--jobs", refused}, "absolute path in the pods"},
		{[]string{"cluster", "k8s", "--config", cfg, "--shards", "3", "--out", grid, "--pod-config", "exp.yaml", "--jobs", refused}, "absolute path in the pods"},
		{[]string{"cluster", "slurm", "--config", cfg, "--shards", "3", "--out", grid, "--endpoint", url, "--server-cmd", "x", "--jobs", refused}, "not both"},
	} {
		err := dispatch(context.Background(), c.args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want a refusal saying %q", c.args, err, c.want)
		}
	}
	podCfg := filepath.Join(dir, "pod")
	if err := gen(podCfg, "--pod-config", "/data/exp.yaml"); err != nil {
		t.Fatal(err)
	}
	if cmd := containerCmd(t, podSpec(t, filepath.Join(podCfg, "shards.yaml")), "containers", "bhasha"); !strings.Contains(cmd, "--config '/data/exp.yaml'") {
		t.Errorf("--pod-config: the container runs %s", cmd)
	}
	if _, err := os.Stat(refused); !os.IsNotExist(err) {
		t.Errorf("a refusal wrote %s", refused)
	}
}
