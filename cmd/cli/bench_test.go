package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/internal/benchdata"
	"github.com/bhashalab/bhasha/runtime/cache"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/studies/experiment"
)

// simChild serves `bhasha sim` in a child process (so that its CPU time is
// not the client's) and returns its base URL.
func simChild(b *testing.B, args ...string) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := cli(append([]string{"sim", "--addr", addr, "--bundle", ""}, args...)...)
	c.Stderr = io.Discard
	if err := c.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Process.Kill(); c.Wait() })
	for range 200 {
		if r, err := http.Get("http://" + addr + "/health"); err == nil {
			r.Body.Close()
			return "http://" + addr + "/v1"
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.Fatal("simulator did not start")
	return ""
}

func synthExperiment(b *testing.B, dir string, n, conc int) *experiment.Experiment {
	p := filepath.Join(dir, "exp.yaml")
	os.WriteFile(p, []byte(fmt.Sprintf("name: bench\nsynthetic: {count: %d}\nmodels:\n  - {name: tiny, served_name: sim-tiny-1b, endpoints: [\"http://127.0.0.1:1/v1\"], max_concurrency: %d}\ndecoding: {max_tokens: 8}\n", n, conc)), 0o644)
	e, err := bhasha.Load(context.Background(), p)
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// job builds the run's job of exp (inside the timed loop, where run.Execute
// built the experiment before it took jobs).
func job(b *testing.B, exp *experiment.Experiment) *run.Job {
	j, err := exp.Job(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return j
}

// wrkLoad posts the bodies (cycling through them) to url's
// chat/completions with wrk (conc connections, 2 threads) for d, from a Lua
// script written to dir, and returns wrk's requests per second.
func wrkLoad(b *testing.B, wrk, dir, url string, bodies [][]byte, conc int, d time.Duration) float64 {
	b.Helper()
	var lua strings.Builder
	lua.WriteString("local bodies = {\n")
	for _, body := range bodies {
		eq := ""
		for bytes.Contains(body, []byte("]"+eq+"]")) {
			eq += "="
		}
		fmt.Fprintf(&lua, "[%s[%s]%s],\n", eq, body, eq)
	}
	lua.WriteString("}\nlocal i = 0\nwrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\n" +
		"request = function()\n  i = i % #bodies + 1\n  return wrk.format(nil, nil, nil, bodies[i])\nend\n")
	script := filepath.Join(dir, "post.lua")
	if err := os.WriteFile(script, []byte(lua.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	out, err := exec.Command(wrk, "-c", fmt.Sprint(conc), "-t", "2", "-d", fmt.Sprintf("%ds", int(d.Seconds())),
		"-s", script, url+"/chat/completions").CombinedOutput()
	if err != nil {
		b.Fatalf("wrk: %v\n%s", err, out)
	}
	for line := range strings.Lines(string(out)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Requests/sec:"); ok {
			rate, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				b.Fatalf("wrk's Requests/sec: %v\n%s", err, out)
			}
			if strings.Contains(string(out), "Non-2xx") {
				b.Fatalf("wrk got error statuses:\n%s", out)
			}
			return rate
		}
	}
	b.Fatalf("wrk printed no Requests/sec:\n%s", out)
	return 0
}

// BenchmarkEngineThroughput: the engine against `bhasha sim --latency 50ms`
// at 256 concurrency, as a fraction of the ideal 256/0.05 s = 5120 req/s and
// of wrk (256 connections posting the same bodies) on the same server; and
// the client's CPU time per request. of-wrk times the whole run.Execute
// (opening the run directory and the cache, the manifest, closing the
// records); send-of-wrk times the stage's sending alone, from its first
// request to its last record (run.Progress's final Elapsed), as wrk's
// figure times its sending. Skipped when wrk is not on PATH.
func BenchmarkEngineThroughput(b *testing.B) {
	const n, conc = 20000, 256
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		b.Skip("wrk is not on PATH (Debian: apt-get install wrk; `make deps` installs it): it is the comparator of this benchmark")
	}
	url := simChild(b, "--latency", "50ms")
	dir := b.TempDir()
	exp := synthExperiment(b, dir, n, conc)
	var bodies [][]byte
	for r := range exp.StreamStage(1, nil, nil) {
		body, _ := r.Body("sim-tiny-1b")
		bodies = append(bodies, body)
	}
	wrkRate := wrkLoad(b, wrk, dir, url, bodies, conc, 5*time.Second)
	b.ResetTimer()
	var engineRate, sendRate float64
	var cpuPerReq time.Duration
	for i := range b.N {
		out := filepath.Join(dir, fmt.Sprint("run", i))
		var sending time.Duration
		progress := func(p run.Progress) {
			if p.Final {
				sending = p.Elapsed
			}
		}
		c0 := benchdata.CPUTime()
		start := time.Now()
		release := holdRunHeap() // as cmdRun holds it
		m, err := run.Execute(context.Background(), job(b, exp), run.Options{Out: out, Endpoint: url, CacheDir: filepath.Join(dir, fmt.Sprint("cache", i)), Progress: progress})
		release()
		if err != nil || m.Counts.OK != n || sending <= 0 {
			b.Fatalf("%v %+v (sending took %v)", err, m.Counts, sending)
		}
		engineRate = float64(n) / time.Since(start).Seconds()
		sendRate = float64(n) / sending.Seconds()
		cpuPerReq = (benchdata.CPUTime() - c0) / n
	}
	b.ReportMetric(engineRate, "engine-req/s")
	b.ReportMetric(wrkRate, "wrk-req/s")
	b.ReportMetric(engineRate/(conc/0.05), "of-ideal")
	b.ReportMetric(engineRate/wrkRate, "of-wrk")
	b.ReportMetric(sendRate/wrkRate, "send-of-wrk")
	b.ReportMetric(float64(cpuPerReq.Microseconds()), "client-cpu-µs/req")
}

// BenchmarkCacheReplay100k: a run whose 100,000 answers are all cached
// (records written, nothing sent); the target is at most 2 s.
func BenchmarkCacheReplay100k(b *testing.B) {
	const n = 100000
	url := simChild(b)
	dir := b.TempDir()
	exp := synthExperiment(b, dir, n, 64)
	cdir := filepath.Join(dir, "cache")
	// Fill the cache directly under the identity the live server reports.
	cfgs := exp.ModelConfigs()
	cfgs[0].Endpoints = []string{url}
	live, err := engine.New(context.Background(), cfgs, engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	cfgs[0].Root = live.Models()[0].Identity.Root
	off, err := engine.NewOffline(cfgs, engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	store, _, err := cache.Open(cdir)
	if err != nil {
		b.Fatal(err)
	}
	for r := range exp.StreamStage(1, nil, nil) {
		p, _ := off.Prepare(r)
		v, _ := json.Marshal(engine.Result{Text: "cached answer " + r.Key.Item, FinishReason: "stop", PromptTokens: 20, CompletionTokens: 3})
		store.Put(p.CacheKey, v)
	}
	store.Close()
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		release := holdRunHeap() // as cmdRun holds it
		m, err := run.Execute(context.Background(), job(b, exp), run.Options{Out: filepath.Join(dir, fmt.Sprint("run", i)), Endpoint: url, CacheDir: cdir})
		release()
		if err != nil || m.Counts.CachedThisRun != n || m.Counts.SentThisRun != 0 {
			b.Fatalf("%v %+v", err, m.Counts)
		}
		b.ReportMetric(time.Since(start).Seconds(), "replay-s")
	}
}

// BenchmarkPeakMemory1M: peak RSS of `bhasha run` (a child process) over
// 1,000,000 synthetic requests against a zero-latency simulator. The peak
// comes at the run's end, where it scores every answer at once (the
// scored answers of the run are held together), so it grows with the
// answers; while the run sends, its heap stays near the run's floor.
//
// Synthetic: the synthetic study's one-stage requests of a few bytes each,
// not a study's prompts; BenchmarkPapersGrid writes the IndicKLAR grid's
// records (2-3 kB each, two stages) and measures them from disk.
func BenchmarkPeakMemory1M(b *testing.B) {
	n := envCount(b, "BHASHA_BENCH_N", 1000000)
	url := simChild(b)
	for range b.N {
		dir := b.TempDir()
		synthExperiment(b, dir, n, 128)
		c := cli("run", "--config", filepath.Join(dir, "exp.yaml"), "--out", filepath.Join(dir, "run"), "--cache-dir", filepath.Join(dir, "cache"), "--endpoint", url)
		var stderr bytes.Buffer
		c.Stderr = &stderr
		start := time.Now()
		if err := c.Run(); err != nil {
			b.Fatalf("%v %s", err, stderr.String())
		}
		el := time.Since(start)
		ru := c.ProcessState.SysUsage().(*syscall.Rusage)
		m, err := run.ReadManifest(filepath.Join(dir, "run"))
		if err != nil {
			b.Fatal(err)
		}
		if m.Counts.Records != n || m.Counts.OK != n || !strings.Contains(stderr.String(), "complete") {
			b.Fatalf("counts %+v for %d requests: %s", m.Counts, n, stderr.String())
		}
		// The run directory's bytes (its compressed segments and their
		// indexes, the live records file, the manifest) per record.
		b.ReportMetric(float64(dirBytes(b, filepath.Join(dir, "run")))/float64(n), "record-bytes")
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB")
		b.ReportMetric(float64(n)/el.Seconds(), "req/s")
	}
}
