package cli

// This file writes an IndicKLAR run directory at the papers' grid, for the
// benchmarks that measure the user's path from disk (gridWrite).
//
// The IndicKLAR release is not available here (PROTOCOLS.md: only a
// 160-fact demo bundle is), so the data is a generated dataset in the
// release's own format (gridWriteDataset: ROOT/<lang>/<relation>.json, read by
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
// gridWrite runs that experiment as `bhasha run` does, with the network taken
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
// written, the endpoint recorded is gridEndpoint, latencies are in-process
// ones, and what a two-step strategy's second stage looks up of its first
// is held as a 128-bit key hash and the response (not the records file
// reloaded), so that memory stays bounded by the translations, not the
// run. The records are in the engine's completion order, as a run's are.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"hash/maphash"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/datasets/lang"
	"github.com/bhashalab/bhasha/internal/atomicfile"
	"github.com/bhashalab/bhasha/internal/simulate"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/sim"
)

// Endpoint is the base URL the records and the manifest name: the
// simulator answers in-process, not on a port.
const gridEndpoint = "http://in-process.bhasha-sim/v1"

// Strategies are the main evaluation's nine, as indicklar-main.yaml lists
// them: Table 1's eight rows (its Base is baseline) and Table 6's
// Obj-Baseline (baseline-cands).
var gridStrategies = []string{"baseline", "baseline-cands", "2step-cm", "2step-en", "2step-translit", "1step-cm", "1step-en", "tint-cm", "tint-en"}

// modelSizes are the nine simulated models' sizes (billions of
// parameters): the simulator's accuracy grows with size.
var gridModelSizes = []int{1, 2, 3, 4, 7, 8, 13, 32, 70}

// Spec is a grid: how many facts, over how many relations, in which
// languages, asked of how many models.
type gridSpec struct {
	Facts     int      // facts (items), numbered 1..Facts
	Relations int      // relations the facts are dealt over (default 20)
	Languages []string // default gridPaperLanguages
	Models    int      // simulated models, 1 to 9 (default 9)
	// Concurrency is each model's max_concurrency (default 2): the
	// simulator answers in this process, so more only adds goroutines.
	Concurrency int
}

func (s gridSpec) withDefaults() gridSpec {
	if s.Relations == 0 {
		s.Relations = len(gridRelations)
	}
	if len(s.Languages) == 0 {
		s.Languages = gridPaperLanguages
	}
	if s.Models == 0 {
		s.Models = len(gridModelSizes)
	}
	if s.Concurrency == 0 {
		s.Concurrency = 2
	}
	return s
}

// PerFact is the number of requests one fact asks of one model in the
// paper's languages: 2 baselines × 30 forms + 7 strategies × 18 native
// forms + 3 first stages × 18 native forms = 240.
const gridPerFact = 240

// FactsFor is the number of facts whose grid, asked of models models in
// the paper's languages, comes nearest to records requests (at least 1).
func gridFactsFor(records, models int) int {
	return max(1, (records+models*gridPerFact/2)/(models*gridPerFact))
}

// Experiment is the grid's experiment file, reading the dataset at
// dataDir (an absolute path).
func gridExperiment(name, dataDir string, s gridSpec) []byte {
	s = s.withDefaults()
	var b bytes.Buffer
	fmt.Fprintf(&b, "# The IndicKLAR main evaluation's grid (experiments/paper/indicklar-main.yaml) on a generated\n")
	fmt.Fprintf(&b, "# dataset in the release's format (%d facts), asked of %d simulated models: SIMULATED.\n", s.Facts, s.Models)
	fmt.Fprintf(&b, "name: %s\nstudy: indicklar\ndataset: {path: %q, format: klar}\n", name, dataDir)
	fmt.Fprintf(&b, "languages: [%s]\nforms: [native, code-mixed, english]\n", strings.Join(s.Languages, ", "))
	fmt.Fprintf(&b, "strategies: [%s]\nreference: baseline\nseed: 12345\nprompt: {shots: 3}\nmodels:\n", strings.Join(gridStrategies, ", "))
	for _, size := range gridModelSizes[:s.Models] {
		fmt.Fprintf(&b, "  - {name: grid-%db, served_name: sim-grid-%db, size_b: %d, max_concurrency: %d}\n", size, size, size, s.Concurrency)
	}
	return b.Bytes()
}

// Layout names the files of a grid directory ROOT: ROOT/dataset (the
// generated dataset), ROOT/experiment.yaml (the experiment) and ROOT/run
// (the run directory).
type gridLayout struct{ Root string }

func (l gridLayout) Dataset() string    { return filepath.Join(l.Root, "dataset") }
func (l gridLayout) Experiment() string { return filepath.Join(l.Root, "experiment.yaml") }
func (l gridLayout) Run() string        { return filepath.Join(l.Root, "run") }

// Summary is what Write wrote.
type gridSummary struct {
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
func gridWrite(ctx context.Context, l gridLayout, s gridSpec, progress io.Writer) (gridSummary, error) {
	s = s.withDefaults()
	sum := gridSummary{Facts: s.Facts, Models: s.Models}
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
	if err := gridWriteDataset(data, s.Facts, s.Relations, s.Languages); err != nil {
		return sum, err
	}
	if err := os.WriteFile(l.Experiment(), gridExperiment("indicklar-grid", data, s), 0o644); err != nil {
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
		models[i].Endpoints = []string{gridEndpoint}
	}
	eo := job.Engine
	eo.HTTPClient = &http.Client{Transport: gridInProcess{srv}}
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
	m := &run.Manifest{Tool: run.ToolVersion, Experiment: job.Name, ExperimentFile: gridAbsOf(job.Path), ExperimentHash: job.Hash,
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

func gridAbsOf(p string) string {
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
type gridInProcess struct{ h http.Handler }

func (t gridInProcess) RoundTrip(r *http.Request) (*http.Response, error) {
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

// Relations are IndicKLAR's 20 relations (PROTOCOLS.md §1.2), in the
// release's order.
var gridRelations = []string{"applies_to_jurisdiction", "capital", "capital_of", "continent", "country_of_citizenship",
	"developer", "field_of_work", "headquarters_location", "instrument", "language_of_work_or_name", "languages_spoken",
	"location_of_formation", "manufacturer", "native_language", "occupation", "official_language", "owned_by",
	"place_of_birth", "place_of_death", "religion"}

// PaperLanguages are the 18 Indian languages of the IndicKLAR paper and
// English, as its main experiment names them (experiments/paper/indicklar-main.yaml).
var gridPaperLanguages = []string{"as", "bn", "doi", "gu", "hi", "kn", "gom", "mai", "ml", "mr", "ne", "or", "pa", "sa", "sd", "ta", "te", "ur", "en"}

// codeMixed are the 11 languages the release has a code-mixed directory
// for (<code>-en: asm ben guj hin mal mar ori pun san tam tel).
var gridCodeMixed = map[string]bool{"asm": true, "ben": true, "guj": true, "hin": true, "mal": true, "mar": true, "ori": true,
	"pun": true, "san": true, "tam": true, "tel": true}

// objectsPerRelation is the size of each relation's object vocabulary:
// facts of one relation share objects, and their candidates are drawn
// from it, as the release's are.
const gridObjectsPerRelation = 40

// dataLanguage is one directory of the dataset.
type gridDataLanguage struct {
	dir    string // hin, hin-en, en
	native []rune // letters of the language's main script ("" for English)
	mixed  bool   // code-mixed: native grammar words, English content words
}

// WriteDataset writes a generated dataset in the IndicKLAR release format
// (ROOT/<lang>/<relation>.json, <lang>-en/ for the code-mixed form, en/ for
// English; {"prompt_templates": [...], "samples": [{"index", "subject",
// "object", "object_candidates"}]}, candidates one comma-separated string
// with the gold last) to root, for the languages given (codes the
// registry accepts). Facts are numbered 1..facts and dealt to the first
// relations round-robin (to as many as there are facts, when fewer);
// every fact exists in every language and form.
// Subjects and objects are pseudo-words, spelled in each language's main
// script from one Latin spelling (so a fact's forms correspond), of the
// release's lengths; the English templates ask the relation in words, the
// native ones in pseudo-words of the script, the code-mixed ones mix both.
// The same arguments write the same bytes.
func gridWriteDataset(root string, facts, relations int, languages []string) error {
	if facts < 1 || relations < 1 || relations > len(gridRelations) {
		return fmt.Errorf("generating a dataset: %d facts over %d relations (want at least 1 fact, 1 to %d relations)", facts, relations, len(gridRelations))
	}
	relations = min(relations, facts) // every relation written has a fact
	reg := lang.New()
	var dirs []gridDataLanguage
	for _, code := range languages {
		l, err := reg.Lookup(code)
		if err != nil {
			return fmt.Errorf("generating a dataset: %w", err)
		}
		if l.ISO3 == "eng" {
			dirs = append(dirs, gridDataLanguage{dir: "en"})
			continue
		}
		letters, err := gridScriptLetters(l)
		if err != nil {
			return err
		}
		dirs = append(dirs, gridDataLanguage{dir: l.KLAR, native: letters})
		if gridCodeMixed[l.KLAR] {
			dirs = append(dirs, gridDataLanguage{dir: l.KLAR + "-en", native: letters, mixed: true})
		}
	}
	type sample struct {
		Index      int    `json:"index"`
		Subject    string `json:"subject"`
		Object     string `json:"object"`
		Candidates string `json:"object_candidates"`
	}
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d.dir), 0o755); err != nil {
			return fmt.Errorf("generating a dataset: %w", err)
		}
		for r := range relations {
			rel := gridRelations[r]
			var samples []sample
			for id := r + 1; id <= facts; id += relations {
				obj := gridObjectOf(rel, id)
				cands := make([]string, 0, 10)
				for _, o := range gridCandidatesOf(rel, id, obj) {
					cands = append(cands, d.spell(o, true))
				}
				cands = append(cands, d.spell(obj, true))
				samples = append(samples, sample{Index: id, Subject: d.spell(gridSubjectOf(rel, id), false), Object: d.spell(obj, true), Candidates: strings.Join(cands, ", ")})
			}
			b, err := json.MarshalIndent(struct {
				Templates []string `json:"prompt_templates"`
				Samples   []sample `json:"samples"`
			}{[]string{d.template(rel)}, samples}, "", " ")
			if err != nil {
				return err
			}
			p := filepath.Join(root, d.dir, rel+".json")
			if err := os.WriteFile(p, append(b, '\n'), 0o644); err != nil {
				return fmt.Errorf("generating a dataset: %w", err)
			}
		}
	}
	return nil
}

// scriptLetters are the letters (category Lo) of l's main script.
func gridScriptLetters(l lang.Language) ([]rune, error) {
	if len(l.Scripts) == 0 {
		return nil, fmt.Errorf("generating a dataset: %s has no script", l.Name)
	}
	tab, ok := unicode.Scripts[string(l.Scripts[0])]
	if !ok {
		return nil, fmt.Errorf("generating a dataset: no Unicode script %q for %s", l.Scripts[0], l.Name)
	}
	var out []rune
	for _, rg := range tab.R16 {
		for c := rune(rg.Lo); c <= rune(rg.Hi); c += rune(rg.Stride) {
			if unicode.In(c, unicode.Lo) {
				out = append(out, c)
			}
		}
	}
	if len(out) < 26 {
		return nil, fmt.Errorf("generating a dataset: the %s script has %d letters", l.Scripts[0], len(out))
	}
	return out[:26], nil
}

// hash64 is FNV-1a over the parts.
func gridHash64(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// word is a pseudo-word of 4 to 9 Latin letters, a deterministic function
// of its seed.
func gridWord(seed ...string) string {
	const cons, vows = "bcdfghjklmnprstvz", "aeiou"
	x := gridHash64(seed...)
	n := 4 + int(x%6)
	var sb strings.Builder
	for i := range n {
		x = x*6364136223846793005 + 1442695040888963407
		if i%2 == 0 {
			sb.WriteByte(cons[(x>>33)%uint64(len(cons))])
		} else {
			sb.WriteByte(vows[(x>>33)%uint64(len(vows))])
		}
	}
	s := sb.String()
	return strings.ToUpper(s[:1]) + s[1:]
}

// subjectOf is fact id's subject (two words, as "Parliament of Canada" or
// a person's name), objectOf its object (one of the relation's objects).
func gridSubjectOf(rel string, id int) string {
	return gridWord(rel, strconv.Itoa(id), "s1") + " " + gridWord(rel, strconv.Itoa(id), "s2")
}

func gridObjectOf(rel string, id int) string {
	return gridWord(rel, "object", strconv.Itoa(int(gridHash64(rel, strconv.Itoa(id))%gridObjectsPerRelation)))
}

// candidatesOf are nine objects of the relation other than obj.
func gridCandidatesOf(rel string, id int, obj string) []string {
	var out []string
	for k := 0; len(out) < 9; k++ {
		o := gridWord(rel, "object", strconv.Itoa(int(gridHash64(rel, strconv.Itoa(id), "cand", strconv.Itoa(k))%gridObjectsPerRelation)))
		if o != obj && !gridContains(out, o) {
			out = append(out, o)
		}
	}
	return out
}

func gridContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// spell writes a Latin pseudo-word phrase in the directory's script: each
// letter maps to one of the script's letters (English, and the English
// content words of a code-mixed object, stay Latin).
func (d gridDataLanguage) spell(s string, content bool) string {
	if d.native == nil || (d.mixed && content) {
		return s
	}
	var sb strings.Builder
	for _, c := range strings.ToLower(s) {
		if c >= 'a' && c <= 'z' {
			sb.WriteRune(d.native[c-'a'])
		} else {
			sb.WriteRune(c)
		}
	}
	return sb.String()
}

// template is the relation's question with <subject> and <mask>: English
// words for English, pseudo-words of the script for a native form, and a
// native frame around English content words and cue for a code-mixed one.
func (d gridDataLanguage) template(rel string) string {
	words := strings.ReplaceAll(rel, "_", " ")
	switch {
	case d.native == nil:
		return "What is the " + words + " of <subject>? The answer is: <mask>"
	case d.mixed:
		return "<subject> " + d.spell(gridWord(d.dir, rel, "t1"), false) + " " + words + " " + d.spell(gridWord(d.dir, rel, "t2"), false) + "? The answer is: <mask>"
	}
	frame := make([]string, 0, 5)
	for i := range 5 {
		frame = append(frame, d.spell(gridWord(d.dir, rel, "t", strconv.Itoa(i)), false))
	}
	return "<subject> " + strings.Join(frame[:3], " ") + "? " + strings.Join(frame[3:], " ") + ": <mask>"
}

// recorded is what the comparison reads of one record.
type gridRecorded struct {
	sha, response, status, served string
	extracted                     string
	identity                      engine.Identity
	simulated                     bool
}

func gridReadRecords(t *testing.T, dir string) map[string]gridRecorded {
	t.Helper()
	out := map[string]gridRecorded{}
	err := records.Read(dir, func(r *engine.Record) error {
		if _, dup := out[r.Key]; dup {
			t.Errorf("%s: key %s recorded twice", dir, r.Key)
		}
		x, _ := json.Marshal(r.Extracted)
		rec := gridRecorded{sha: r.RequestSHA256, response: r.Response, status: r.Status, served: r.ServedModel, extracted: string(x), simulated: r.Simulated}
		if r.Identity != nil {
			rec.identity = *r.Identity
		}
		if engine.RequestDigest(r.Request) != r.RequestSHA256 {
			t.Errorf("%s: %s: request_sha256 is not the digest of its request", dir, r.Key)
		}
		out[r.Key] = rec
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWriteIsARun: the grid Write writes for a small spec is the run
// `bhasha.Run` writes of the same experiment on the simulator (every
// language form, all nine strategies, both stages of the two-step ones):
// the same keys, each with the same request_sha256, response, status,
// extraction and identity, the same manifest counts, inputs, templates,
// decodings and dataset, and it opens with bhasha.Open to the same number
// of scored answers and the same accuracy table.
func TestGridWriteIsARun(t *testing.T) {
	ctx := context.Background()
	spec := gridSpec{Facts: 4, Relations: 1, Models: 2} // four facts of one relation: each has three demonstrations
	l := gridLayout{Root: t.TempDir()}
	sum, err := gridWrite(ctx, l, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := spec.Facts * spec.Models * gridPerFact; sum.Records != want || sum.OK != want || sum.Withheld != 0 {
		t.Fatalf("wrote %+v, want %d ok records", sum, want)
	}
	if want := spec.Facts * spec.Models * (gridPerFact - 54); sum.Answers != want {
		t.Errorf("%d answers, want %d", sum.Answers, want)
	}
	var respBytes int64
	records.Read(l.Run(), func(r *engine.Record) error { respBytes += int64(len(r.Response)); return nil })
	if respBytes != sum.ResponseBytes || respBytes == 0 {
		t.Errorf("the records hold %d bytes of responses, gridWrite counted %d", respBytes, sum.ResponseBytes)
	}

	exp, err := bhasha.Load(ctx, l.Experiment())
	if err != nil {
		t.Fatal(err)
	}
	realDir := filepath.Join(t.TempDir(), "run")
	if _, err := bhasha.Run(ctx, exp, bhasha.Out(realDir), bhasha.NoCache(), bhasha.CacheDir(t.TempDir())); err != nil {
		t.Fatal(err)
	}
	got, want := gridReadRecords(t, l.Run()), gridReadRecords(t, realDir)
	if len(got) != len(want) {
		t.Errorf("the grid has %d records, the real run %d", len(got), len(want))
	}
	differ := 0
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			differ++
			t.Errorf("the grid lacks %s", k)
		case g != w:
			differ++
			t.Errorf("%s:\n grid %+v\n run  %+v", k, g, w)
		}
		if differ == 5 {
			t.Fatal("and maybe more")
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Fatalf("the grid has %s, which the real run does not", k)
		}
	}

	gm, err := run.ReadManifest(l.Run())
	if err != nil {
		t.Fatal(err)
	}
	wm, err := run.ReadManifest(realDir)
	if err != nil {
		t.Fatal(err)
	}
	if gm.Status != "complete" || !gm.Simulated || gm.Counts.Records != wm.Counts.Records || gm.Counts.OK != wm.Counts.OK || gm.Requests != wm.Requests {
		t.Errorf("manifest: status %s simulated %t counts %+v requests %d; the real run's: counts %+v requests %d", gm.Status, gm.Simulated, gm.Counts, gm.Requests, wm.Counts, wm.Requests)
	}
	if !maps.Equal(gm.Inputs, wm.Inputs) || !maps.Equal(gm.Templates, wm.Templates) || gm.CopyHash != wm.CopyHash || gm.ExperimentHash != wm.ExperimentHash {
		t.Errorf("manifest provenance differs from the real run's")
	}
	gj, _ := json.Marshal(gm.Decodings)
	wj, _ := json.Marshal(wm.Decodings)
	if string(gj) != string(wj) {
		t.Errorf("decodings:\n grid %s\n run  %s", gj, wj)
	}
	gd, _ := json.Marshal(gm.Dataset)
	wd, _ := json.Marshal(wm.Dataset)
	if string(gd) != string(wd) {
		t.Errorf("dataset:\n grid %s\n run  %s", gd, wd)
	}
	copyGot, _ := os.ReadFile(filepath.Join(l.Run(), run.ExperimentFile))
	copyWant, _ := os.ReadFile(filepath.Join(realDir, run.ExperimentFile))
	if string(copyGot) != string(copyWant) {
		t.Errorf("the run's copy of the experiment differs")
	}

	acc := func(dir string) (int, string) {
		r, err := bhasha.Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		n, err := r.Scored()
		if err != nil {
			t.Fatal(err)
		}
		tb, err := r.Table("accuracy")
		if err != nil {
			t.Fatal(err)
		}
		var csv bytes.Buffer
		if err := tb.WriteCSV(&csv); err != nil {
			t.Fatal(err)
		}
		if len(tb.Rows) == 0 {
			t.Errorf("%s: the accuracy table is empty", dir)
		}
		return n, csv.String()
	}
	gn, grows := acc(l.Run())
	wn, wrows := acc(realDir)
	if gn != sum.Answers || gn != wn {
		t.Errorf("bhasha.Open scores %d answers of the grid (written %d), %d of the real run", gn, sum.Answers, wn)
	}
	if grows != wrows {
		t.Errorf("accuracy tables differ:\n%s\n%s", grows, wrows)
	}
}

// TestWriteRefusesARunDirectory: Write never writes into a run directory
// that exists.
func TestGridWriteRefusesARunDirectory(t *testing.T) {
	l := gridLayout{Root: t.TempDir()}
	os.MkdirAll(l.Run(), 0o755)
	os.WriteFile(filepath.Join(l.Run(), records.FileName), []byte("x\n"), 0o644)
	if _, err := gridWrite(context.Background(), l, gridSpec{Facts: 2, Relations: 1, Models: 1}, nil); err == nil {
		t.Fatal("Write wrote into an existing run directory")
	}
	if b, _ := os.ReadFile(filepath.Join(l.Run(), records.FileName)); string(b) != "x\n" {
		t.Errorf("the existing records changed: %q", b)
	}
}

// TestFactsFor: the facts for a record count come nearest to it.
func TestGridFactsFor(t *testing.T) {
	for _, c := range []struct{ records, models, want int }{
		{6364170, 9, 2946}, {640000, 9, 296}, {1, 9, 1}, {240, 1, 1}, {359, 1, 1}, {361, 1, 2},
	} {
		if got := gridFactsFor(c.records, c.models); got != c.want {
			t.Errorf("FactsFor(%d, %d) = %d, want %d", c.records, c.models, got, c.want)
		}
	}
}
