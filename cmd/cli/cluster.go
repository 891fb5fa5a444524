package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/internal/atomicfile"
	"github.com/bhashalab/bhasha/runtime/grid"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/runtime/shard"
	"github.com/bhashalab/bhasha/studies/experiment"
)

// jobSpec is what a grid's job files need: experiment, shards, servers, Kubernetes settings.
type jobSpec struct {
	name, exp, hash, grid        string
	n, parallel, wait            int
	served                       []string // by shard: the served name of its answering model
	serverCmd, endpoint          string
	pvc, mount, image, vllmImage string
	gpus, backoff                int
}

// quote quotes s for a POSIX shell.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// modelCase is a shell case statement setting MODEL to the served model
// of shard $K.
func (s *jobSpec) modelCase(k string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "case \"$%s\" in\n", k)
	for i := 0; i < len(s.served); {
		j := i
		var ks []string
		for ; j < len(s.served) && s.served[j] == s.served[i]; j++ {
			ks = append(ks, strconv.Itoa(j))
		}
		fmt.Fprintf(&b, "  %s) MODEL=%s ;;\n", strings.Join(ks, "|"), quote(s.served[i]))
		i = j
	}
	fmt.Fprintf(&b, "  *) echo \"shard $%s is not one of the %d this job was written for\" >&2; exit 2 ;;\nesac\n", k, s.n)
	return b.String()
}

// reportLoop is shell that reports the grid as one run, the HTML and
// workbook beside the shards.
func (s *jobSpec) reportLoop() string {
	g := quote(s.grid)
	return fmt.Sprintf("bhasha report --run %s --html %s/report.html --xlsx %s/report.xlsx\n", g, g, g)
}

// slurmShards is the job array's sbatch script; a task stops when the
// experiment file changed since (the shard layout follows it).
func (s *jobSpec) slurmShards() string {
	var b strings.Builder
	fmt.Fprintf(&b, `#!/bin/bash
# The %d shards of experiment %s (sha256 %s), one array task each: bhasha run --shard auto.
#SBATCH --job-name=bhasha-%s
#SBATCH --array=0-%d%%%d
#SBATCH --requeue
#SBATCH --signal=B:TERM@120
#SBATCH --output=bhasha-%s-%%A_%%a.log
set -u
have=$(sha256sum %s | cut -d' ' -f1)
if [ "$have" != %s ]; then
  echo "%s changed since its job files were written (sha256 $have, not %s): the shard layout follows the experiment; write the job files again" >&2
  exit 2
fi
K=$((SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN))
`, s.n, s.name, s.hash, s.name, s.n-1, s.parallel, s.name, quote(s.exp), quote(s.hash), s.exp, s.hash)
	endpoint := quote(s.endpoint)
	if s.endpoint == "" {
		b.WriteString(s.modelCase("K"))
		cmd := strings.NewReplacer("{model}", `"$MODEL"`, "{port}", `"$PORT"`).Replace(s.serverCmd)
		fmt.Fprintf(&b, `PORT=
for p in $(shuf -i 20000-60000 -n 64); do
  if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then PORT=$p; break; fi
done
[ -n "$PORT" ] || { echo "no free port found" >&2; exit 1; }
%s &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null' EXIT
for i in $(seq %d); do
  curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break
  kill -0 $server 2>/dev/null || { echo "the server stopped before it was healthy" >&2; exit 1; }
  [ "$i" = %d ] && { echo "the server was not healthy after %d s" >&2; exit 1; }
  sleep 1
done
`, cmd, s.wait, s.wait, s.wait)
		endpoint = `"http://127.0.0.1:$PORT/v1"`
	}
	fmt.Fprintf(&b, `bhasha run --config %s --out %s --shard auto --endpoint %s &
run=$!
trap 'kill -TERM $run 2>/dev/null' TERM
wait $run
status=$?
if [ $status -gt 128 ]; then wait $run; status=$?; fi
if [ $status = 130 ] && [ -n "${SLURM_ARRAY_JOB_ID:-}" ]; then
  scontrol requeue "${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"
fi
exit $status
`, quote(s.exp), quote(s.grid), endpoint)
	return b.String()
}

func cmdCluster(ctx context.Context, reg *bhasha.Registry, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "slurm" && args[0] != "k8s") {
		return errors.New("cluster: want 'cluster slurm' or 'cluster k8s'")
	}
	kind := args[0]
	fs := newFlags("cluster "+kind, "cluster "+kind+" --config FILE --shards N --out GRID [flags]", stderr)
	s := &jobSpec{}
	fs.StringVar(&s.exp, "config", "", "experiment file (YAML), as the tasks read it")
	fs.StringVar(&s.grid, "out", "", "grid directory the shards run into, as the tasks see it")
	fs.IntVar(&s.n, "shards", 0, "number of shards (bhasha plan --shards N shows the layout)")
	fs.IntVar(&s.parallel, "parallel", 0, "shards running at once (default: all)")
	fs.StringVar(&s.serverCmd, "server-cmd", "", "command starting the server beside each shard; {model} is the shard's served model, {port} its port (default: vllm serve {model} --port {port})")
	fs.StringVar(&s.endpoint, "endpoint", "", "base URL (…/v1) of a server every shard shares (a gateway), instead of a server beside each")
	jobs := fs.String("jobs", "jobs", "directory the job files are written to")
	fs.IntVar(&s.wait, "wait", 1800, "seconds a server beside a shard has to become healthy")
	fs.StringVar(&s.pvc, "pvc", "bhasha-grid", "k8s: the PersistentVolumeClaim holding the experiment, its data and the grid")
	fs.StringVar(&s.mount, "mount", "/data", "k8s: where the volume is mounted in the pods")
	fs.StringVar(&s.image, "image", "bhasha:latest", "k8s: the image holding the bhasha command")
	fs.StringVar(&s.vllmImage, "vllm-image", "vllm/vllm-openai:latest", "k8s: the vLLM image run beside each shard")
	fs.IntVar(&s.gpus, "gpus", 1, "k8s: GPUs for the server beside each shard")
	podConfig := fs.String("pod-config", "", "k8s: the experiment file's path in the pods (default: --config, made absolute); --config is read here to divide it")
	fs.IntVar(&s.backoff, "retries", 3, "k8s: retries of a failed shard (backoffLimitPerIndex); disruptions are not counted")
	if err := parseFlags(fs, args[1:], ""); err != nil {
		return err
	}
	cmd := "cluster " + kind
	switch {
	case s.wait < 1 || s.gpus < 0 || s.backoff < 0:
		return fmt.Errorf("%s: --wait must be positive, --gpus and --retries not negative", cmd)
	case kind == "k8s" && s.grid != "" && !filepath.IsAbs(s.grid):
		return fmt.Errorf("cluster k8s: --out %s: give the grid's absolute path in the pods (on the volume mounted at %s)", s.grid, s.mount)
	case *podConfig != "" && !filepath.IsAbs(*podConfig):
		return fmt.Errorf("cluster k8s: --pod-config %s: give the experiment's absolute path in the pods", *podConfig)
	case s.exp == "" || s.grid == "" || s.n < 1:
		return fmt.Errorf("%s: --config, --out and --shards N are required", cmd)
	case s.parallel < 0:
		return fmt.Errorf("%s: --parallel must not be negative, not %d", cmd, s.parallel)
	case s.serverCmd != "" && s.endpoint != "":
		return fmt.Errorf("%s: give --server-cmd (a server beside each shard) or --endpoint (a server every shard shares), not both", cmd)
	}
	// Divide the experiment as bhasha run --shard does.
	exp, err := experiment.Load(ctx, s.exp, experiment.LoadOptions{Studies: reg})
	if err != nil {
		return ownStudy(fmt.Errorf("%s: %w", cmd, err))
	}
	if s.endpoint == "" && exp.Judge != nil {
		return fmt.Errorf("%s: experiment %s names a judge (%s), which the server beside a shard (serving the shard's one model) does not serve: give --endpoint, a gateway serving every model", cmd, exp.Name, exp.Judge.Name)
	}
	j, err := exp.Job(ctx)
	if err != nil {
		return err
	}
	l, err := shard.Plan(j, s.n)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	s.name, s.hash, s.parallel = exp.Name, exp.Hash, cmp.Or(min(s.parallel, s.n), s.n)
	s.serverCmd = cmp.Or(s.serverCmd, "vllm serve {model} --port {port}")
	if s.exp, err = filepath.Abs(s.exp); err == nil {
		s.grid, err = filepath.Abs(s.grid)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	for _, sh := range l.Shards {
		i := slices.IndexFunc(exp.Models, func(m experiment.Model) bool { return m.Name == sh.Model })
		if i < 0 {
			return fmt.Errorf("%s: shard model %s is not among the experiment's models", cmd, sh.Model)
		}
		s.served = append(s.served, exp.Models[i].ServedName)
	}
	if *podConfig != "" {
		s.exp = *podConfig
	}
	files := map[string]string{}
	switch kind {
	case "slurm":
		files["shards.sbatch"] = s.slurmShards()
		files["report.sbatch"] = fmt.Sprintf("#!/bin/bash\n# The report of experiment %s, its shards opened as one run, once every shard has finished.\n#SBATCH --job-name=bhasha-%s-report\n#SBATCH --output=bhasha-%s-report-%%j.log\nset -eu\n%s", s.name, s.name, s.name, s.reportLoop())
		files["submit.sh"] = "#!/bin/sh\n# Submits the shards, then their report, which starts once every shard has succeeded.\nset -eu\ncd \"$(dirname \"$0\")\"\narray=$(sbatch --parsable shards.sbatch)\nsbatch --dependency=afterok:\"${array%%;*}\" report.sbatch\n"
	case "k8s":
		if files["shards.yaml"], files["report.yaml"], err = s.k8sJobs(); err != nil {
			return fmt.Errorf("cluster k8s: %w", err)
		}
		files["submit.sh"] = fmt.Sprintf("#!/bin/sh\n# Starts the shards' Indexed Job, waits for it to complete, then starts the report Job.\nset -eu\ncd \"$(dirname \"$0\")\"\nkubectl apply -f shards.yaml\nkubectl wait --for=condition=complete --timeout=-1s job/%s\nkubectl apply -f report.yaml\n", s.jobName())
	}
	if err := os.MkdirAll(*jobs, 0o755); err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		p := filepath.Join(*jobs, name)
		if err := atomicfile.WriteFile(p, []byte(files[name])); err != nil {
			return fmt.Errorf("%s: %w", cmd, err)
		}
		if strings.HasSuffix(name, ".sh") || strings.HasSuffix(name, ".sbatch") {
			if err := os.Chmod(p, 0o755); err != nil {
				return fmt.Errorf("%s: %w", cmd, err)
			}
		}
		fmt.Fprintln(stdout, p)
	}
	return nil
}

// jobName is the shards' Job name: the experiment's name as a DNS label.
func (k *jobSpec) jobName() string {
	label := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(k.name))
	name := "bhasha-" + label
	return strings.TrimRight(name[:min(len(name), 50)], "-")
}

type kv = map[string]any

// k8sJobs are the Indexed Job running every shard and the Job reporting
// the grid once it completed.
func (k *jobSpec) k8sJobs() (shards, report string, err error) {
	mounts := []any{kv{"name": "grid", "mountPath": k.mount}}
	job := func(name string, meta, spec, pod kv) string {
		meta["name"], meta["labels"] = name, kv{"app.kubernetes.io/name": "bhasha"}
		pod["restartPolicy"] = "Never"
		pod["volumes"] = []any{kv{"name": "grid", "persistentVolumeClaim": kv{"claimName": k.pvc}}}
		spec["template"] = kv{"spec": pod}
		b, e := yaml.Marshal(kv{"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec})
		err = cmp.Or(err, e)
		return string(b)
	}
	endpoint := quote(k.endpoint)
	if k.endpoint == "" {
		endpoint = "http://127.0.0.1:8000/v1"
	}
	run := fmt.Sprintf("exec bhasha run --config %s --out %s --shard auto/%d --endpoint %s", quote(k.exp), quote(k.grid), k.n, endpoint)
	pod := kv{"containers": []any{kv{"name": "bhasha", "image": k.image, "command": []any{"sh", "-c", run}, "volumeMounts": mounts}}}
	if k.endpoint == "" {
		cmd := strings.NewReplacer("{model}", `"$MODEL"`, "{port}", "8000").Replace(k.serverCmd)
		serve := k.modelCase("JOB_COMPLETION_INDEX") + "exec " + cmd
		pod["initContainers"] = []any{kv{
			"name": "vllm", "image": k.vllmImage, "restartPolicy": "Always", // a sidecar: stopped when bhasha ends
			"command":      []any{"sh", "-c", serve},
			"ports":        []any{kv{"containerPort": 8000}},
			"startupProbe": kv{"httpGet": kv{"path": "/health", "port": 8000}, "periodSeconds": 10, "failureThreshold": max(1, k.wait/10)},
			"resources":    kv{"limits": kv{"nvidia.com/gpu": k.gpus}},
			"volumeMounts": mounts,
		}}
	}
	shards = job(k.jobName(), kv{"annotations": kv{"bhasha/experiment-sha256": k.hash}}, kv{
		"completionMode":       "Indexed",
		"completions":          k.n,
		"parallelism":          k.parallel,
		"backoffLimitPerIndex": k.backoff,
		"podFailurePolicy": kv{"rules": []any{
			// A pod evicted or preempted resumes its shard: not a failure.
			kv{"action": "Ignore", "onPodConditions": []any{kv{"type": "DisruptionTarget"}}},
		}},
	}, pod)
	report = job(k.jobName()+"-report", kv{}, kv{"backoffLimit": k.backoff}, kv{"containers": []any{
		kv{"name": "report", "image": k.image, "command": []any{"sh", "-c", "set -eu\n" + k.reportLoop()}, "volumeMounts": mounts},
	}})
	return shards, report, err
}

// cmdMerge writes the shards of a grid as one run directory (grid.Merge).
func cmdMerge(ctx context.Context, _ *bhasha.Registry, args []string, _, stderr io.Writer) error {
	fs := newFlags("merge", "merge --grid GRID --out DIR", stderr)
	g := fs.String("grid", "", "grid directory (the shard run directories of bhasha run --shard K/N)")
	out := fs.String("out", "", "the merged run directory to write (must not exist, or be empty)")
	if err := parseFlags(fs, args, "merge: --grid and --out are required", g, out); err != nil {
		return err
	}
	if err := grid.Merge(ctx, *g, *out); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	m, err := run.ReadManifest(*out)
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	fmt.Fprintf(stderr, "merge: %s: %d records of experiment %s, status %s\n", *out, m.Counts.Records, m.Experiment, m.Status)
	for _, w := range m.Warnings {
		fmt.Fprintf(stderr, "merge: note: %s\n", w)
	}
	return nil
}
