// Package gridrun writes an IndicKLAR run directory at the papers' grid,
// for the benchmarks that measure the user's path from disk.
//
// The IndicKLAR release is not available here (PROTOCOLS.md: only a
// 160-fact demo bundle is), so the data is a generated dataset in the
// release's own format (WriteDataset: ROOT/<lang>/<relation>.json, read by
// the study's klar reader as a user's copy of the release would be). The
// experiment is the paper's main one (experiments/paper/indicklar-main.yaml:
// the 18 Indian languages and English, native, code-mixed and English
// forms, 30 language forms in all, the nine strategies (Table 1's eight
// rows and Table 6's Obj-Baseline), three
// demonstrations, seed 12345) asked of nine simulated models. Per fact and
// model it asks 240 requests: the two baselines in all 30 forms, the seven
// other strategies in the 18 native forms, and the first stage (a
// translation) of the three two-step strategies: 186 scored answers and
// 54 translations.
//
// Write runs that experiment as `bhasha run` does, with the network taken
// out: the requests are the experiment's Job, stage by stage (so keys,
// bodies and request_sha256 are what a real run writes); the real engine
// sends them, over an in-process http.RoundTripper, to the real simulator
// (sim.Server, configured as bhasha.Run configures it: the experiment's
// facts, simulate.ModelsOf); each ok record gets the study's
// Extract and goes through records.CreateWith (holding the directory's
// lock, so the live file is sealed into zstd segments as it grows, as
// `bhasha run` seals it) / Write / Close (seals, flushes); the directory
// gets the run's copy of the experiment and a manifest (run.WriteManifest)
// that says simulated, as a simulated run's does. What differs from `bhasha run`: no response cache is read or
// written, the endpoint recorded is Endpoint, latencies are in-process
// ones, and what a two-step strategy's second stage looks up of its first
// is held as a 128-bit key hash and the response (not the records file
// reloaded), so that memory stays bounded by the translations, not the
// run. The records are in the engine's completion order, as a run's are.
package gridrun

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/internal/atomicfile"
	"github.com/bhashalab/bhasha/internal/simulate"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/sim"
)

// Endpoint is the base URL the records and the manifest name: the
// simulator answers in-process, not on a port.
const Endpoint = "http://in-process.bhasha-sim/v1"

// Strategies are the main evaluation's nine, as indicklar-main.yaml lists
// them: Table 1's eight rows (its Base is baseline) and Table 6's
// Obj-Baseline (baseline-cands).
var Strategies = []string{"baseline", "baseline-cands", "2step-cm", "2step-en", "2step-translit", "1step-cm", "1step-en", "tint-cm", "tint-en"}

// modelSizes are the nine simulated models' sizes (billions of
// parameters): the simulator's accuracy grows with size.
var modelSizes = []int{1, 2, 3, 4, 7, 8, 13, 32, 70}

// Spec is a grid: how many facts, over how many relations, in which
// languages, asked of how many models.
type Spec struct {
	Facts     int      // facts (items), numbered 1..Facts
	Relations int      // relations the facts are dealt over (default 20)
	Languages []string // default PaperLanguages
	Models    int      // simulated models, 1 to 9 (default 9)
	// Concurrency is each model's max_concurrency (default 2): the
	// simulator answers in this process, so more only adds goroutines.
	Concurrency int
}

func (s Spec) withDefaults() Spec {
	if s.Relations == 0 {
		s.Relations = len(Relations)
	}
	if len(s.Languages) == 0 {
		s.Languages = PaperLanguages
	}
	if s.Models == 0 {
		s.Models = len(modelSizes)
	}
	if s.Concurrency == 0 {
		s.Concurrency = 2
	}
	return s
}

// PerFact is the number of requests one fact asks of one model in the
// paper's languages: 2 baselines × 30 forms + 7 strategies × 18 native
// forms + 3 first stages × 18 native forms = 240.
const PerFact = 240

// FactsFor is the number of facts whose grid, asked of models models in
// the paper's languages, comes nearest to records requests (at least 1).
func FactsFor(records, models int) int {
	return max(1, (records+models*PerFact/2)/(models*PerFact))
}

// Experiment is the grid's experiment file, reading the dataset at
// dataDir (an absolute path).
func Experiment(name, dataDir string, s Spec) []byte {
	s = s.withDefaults()
	var b bytes.Buffer
	fmt.Fprintf(&b, "# The IndicKLAR main evaluation's grid (experiments/paper/indicklar-main.yaml) on a generated\n")
	fmt.Fprintf(&b, "# dataset in the release's format (%d facts), asked of %d simulated models: SIMULATED.\n", s.Facts, s.Models)
	fmt.Fprintf(&b, "name: %s\nstudy: indicklar\ndataset: {path: %q, format: klar}\n", name, dataDir)
	fmt.Fprintf(&b, "languages: [%s]\nforms: [native, code-mixed, english]\n", strings.Join(s.Languages, ", "))
	fmt.Fprintf(&b, "strategies: [%s]\nreference: baseline\nseed: 12345\nprompt: {shots: 3}\nmodels:\n", strings.Join(Strategies, ", "))
	for _, size := range modelSizes[:s.Models] {
		fmt.Fprintf(&b, "  - {name: grid-%db, served_name: sim-grid-%db, size_b: %d, max_concurrency: %d}\n", size, size, size, s.Concurrency)
	}
	return b.Bytes()
}

// Layout names the files of a grid directory ROOT: ROOT/dataset (the
// generated dataset), ROOT/experiment.yaml (the experiment) and ROOT/run
// (the run directory).
type Layout struct{ Root string }

func (l Layout) Dataset() string    { return filepath.Join(l.Root, "dataset") }
func (l Layout) Experiment() string { return filepath.Join(l.Root, "experiment.yaml") }
func (l Layout) Run() string        { return filepath.Join(l.Root, "run") }

// Summary is what Write wrote.
type Summary struct {
	Facts    int `json:"facts"`
	Models   int `json:"models"`
	Records  int `json:"records"`  // records written (one per request)
	OK       int `json:"ok"`       // of which ok
	Answers  int `json:"answers"`  // ok records of scored answers (role answer)
	Withheld int `json:"withheld"` // requests a stage could not build (always 0 in a complete grid)
	// ResponseBytes is the bytes of every record's response (UTF-8), what
	// a scan of the records can be checked against (0 in a grid.json
	// written before it was counted).
	ResponseBytes int64 `json:"response_bytes"`
}

// Write generates the dataset and the experiment under l.Root (which must
// not hold a run directory yet) and runs it into l.Run() as described in
// the package comment; progress, when not nil, gets a line every
// 100,000 records. It returns what was written, and an error when any
// request failed or could not be built (the directory then stays as far
// as it got, its manifest saying interrupted or incomplete).
func Write(ctx context.Context, l Layout, s Spec, progress io.Writer) (Summary, error) {
	s = s.withDefaults()
	sum := Summary{Facts: s.Facts, Models: s.Models}
	if progress == nil {
		progress = io.Discard
	}
	if _, err := os.Stat(l.Run()); err == nil {
		return sum, fmt.Errorf("writing the grid: %s exists already", l.Run())
	}
	if err := os.MkdirAll(l.Root, 0o755); err != nil {
		return sum, fmt.Errorf("writing the grid: %w", err)
	}
	data, err := filepath.Abs(l.Dataset())
	if err != nil {
		return sum, err
	}
	if err := WriteDataset(data, s.Facts, s.Relations, s.Languages); err != nil {
		return sum, err
	}
	if err := os.WriteFile(l.Experiment(), Experiment("indicklar-grid", data, s), 0o644); err != nil {
		return sum, fmt.Errorf("writing the grid: %w", err)
	}
	exp, err := bhasha.Load(ctx, l.Experiment())
	if err != nil {
		return sum, fmt.Errorf("writing the grid: %w", err)
	}
	job, err := exp.Job(ctx)
	if err != nil {
		return sum, fmt.Errorf("writing the grid: %w", err)
	}
	// The simulator as bhasha.Run starts it (simulate.Start), served in-process.
	srv, err := sim.New(sim.Config{Facts: sim.FactsOf(exp.Items()), Models: simulate.ModelsOf(exp)})
	if err != nil {
		return sum, err
	}
	models := slices.Clone(job.Models)
	for i := range models {
		models[i].Endpoints = []string{Endpoint}
	}
	eo := job.Engine
	eo.HTTPClient = &http.Client{Transport: inProcess{srv}}
	eng, err := engine.New(ctx, models, eo)
	if err != nil {
		return sum, fmt.Errorf("writing the grid: connecting to the in-process simulator: %w", err)
	}

	dir := l.Run()
	lk, err := records.LockDir(dir, records.Exclusive)
	if err != nil {
		return sum, err
	}
	defer lk.Unlock()
	if err := atomicfile.WriteFile(filepath.Join(dir, run.ExperimentFile), job.Copy); err != nil {
		return sum, err
	}
	copyHash := sha256.Sum256(job.Copy)
	m := &run.Manifest{Tool: run.ToolVersion, Experiment: job.Name, ExperimentFile: absOf(job.Path), ExperimentHash: job.Hash,
		CopyHash: hex.EncodeToString(copyHash[:]), Decoding: job.Decoding, Started: time.Now().UTC(), Status: "running",
		Inputs: job.Inputs, Templates: job.Templates, Models: eng.Models(), Decodings: map[string][]engine.Decoding{}}
	if m.Inputs == nil {
		m.Inputs = map[string]string{}
	}
	for _, mi := range m.Models {
		for _, sv := range mi.Servers {
			for _, sm := range sv.Models {
				if sm.ID == mi.ServedName && sm.IsSimulated() {
					m.Simulated = true
				}
			}
		}
	}
	if d := job.Dataset; d != nil {
		m.Dataset = &run.DatasetInfo{Name: d.Name, Items: d.Items, Skipped: d.Skipped, Notes: d.Notes, Missing: d.Missing}
	}
	if err := run.WriteManifest(dir, m); err != nil {
		return sum, err
	}

	// What a later stage looks up of an earlier one: the responses of the
	// records whose role is not an answer (a two-step strategy's first
	// stage), by a 128-bit hash of their key.
	seed1, seed2 := maphash.MakeSeed(), maphash.MakeSeed()
	hkey := func(k string) [2]uint64 { return [2]uint64{maphash.String(seed1, k), maphash.String(seed2, k)} }
	earlier := map[[2]uint64]string{}
	lookup := func(k engine.Key) (*engine.Record, bool) {
		resp, ok := earlier[hkey(k.String())]
		if !ok {
			return nil, false
		}
		return &engine.Record{Key: k.String(), Fields: k, Status: engine.StatusOK, Response: resp}, true
	}
	var runErr error
	var st engine.Stats
	seen := 0
	for stage := 1; stage <= job.Stages && runErr == nil; stage++ {
		w, err := records.CreateWith(dir, records.Options{Lock: lk}) // seals as bhasha run's writer does
		if err != nil {
			return sum, err
		}
		withheld := 0
		reqs := func(yield func(engine.Request, error) bool) {
			for r, err := range job.Requests(stage, lookup, func(engine.Key) { withheld++ }) {
				if err == nil {
					g := run.DecodingGroup(r.Key)
					if !slices.ContainsFunc(m.Decodings[g], func(d engine.Decoding) bool { return reflect.DeepEqual(d, r.Decoding) }) {
						m.Decodings[g] = append(m.Decodings[g], r.Decoding)
					}
				}
				if !yield(r, err) {
					return
				}
			}
		}
		s, err := eng.Run(ctx, reqs, func(rec *engine.Record) error {
			if rec.Status == engine.StatusOK {
				if job.Extract != nil {
					job.Extract(rec)
				}
				if rec.Fields.Role.Kind != engine.RoleAnswer && stage < job.Stages {
					earlier[hkey(rec.Key)] = rec.Response
				}
				if rec.Fields.Role.Kind == engine.RoleAnswer {
					sum.Answers++
				}
			}
			if err := w.Write(rec); err != nil {
				return err
			}
			sum.ResponseBytes += int64(len(rec.Response))
			if seen++; seen%100000 == 0 {
				fmt.Fprintf(progress, "gridrun: %d records (stage %d of %d)\n", seen, stage, job.Stages)
			}
			return nil
		})
		if cerr := w.Close(); cerr != nil && err == nil {
			err = cerr
		}
		wr := w.Written()
		sum.Records += wr.Records
		sum.OK += wr.OK
		sum.Withheld += withheld
		st.Failed += wr.Failed
		st.Sent += s.Sent
		runErr = err
	}
	end := time.Now().UTC()
	m.Ended = &end
	m.Counts = run.Counts{Records: sum.Records, OK: sum.OK, Failed: st.Failed, SentThisRun: st.Sent}
	m.Requests = sum.Records + sum.Withheld
	m.Pending = sum.Withheld
	switch {
	case runErr != nil:
		m.Status, m.Error = "interrupted", runErr.Error()
	case st.Failed > 0:
		m.Status = "incomplete"
	case sum.Withheld > 0:
		m.Status = "partial"
	default:
		m.Status = "complete"
	}
	if n := eng.UnknownItems(); n > 0 && runErr == nil {
		runErr = fmt.Errorf("%d answer(s) came from a simulator that did not know their item", n)
	}
	if err := run.WriteManifest(dir, m); err != nil {
		return sum, errors.Join(runErr, err)
	}
	if runErr == nil && m.Status != "complete" {
		runErr = fmt.Errorf("writing the grid: the run is %s (%d failed, %d withheld)", m.Status, st.Failed, sum.Withheld)
	}
	return sum, runErr
}

func absOf(p string) string {
	if p == "" {
		return ""
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// inProcess is an http.RoundTripper that hands each request to a handler
// in this process: the engine's whole HTTP path (bodies, headers, status
// codes, bounds) without a socket.
type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if r.Body == nil {
		r.Body = http.NoBody
	}
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}
