// Package batch moves a job's pending requests out to an OpenAI
// Batch file (the input of `vllm run-batch` and of OpenAI-compatible batch
// APIs) and brings the answers back into the run directory and the cache,
// so that analysis proceeds as if the engine had run them.
//
// Export writes DIR/batch/input.jsonl, one line per pending request:
//
//	{"custom_id": <cache key hex>, "method": "POST", "url": "/v1/chat/completions" | "/v1/completions", "body": {...}}
//
// and DIR/batch/index.jsonl mapping each custom_id to its record key. The
// body is byte for byte what the engine would send. Import reads a batch
// output file ({"custom_id", "response": {"status_code", "body"}, "error"})
// and writes one record per answered request (ok, or failed with the error),
// caching the ok answers under the same key the engine uses.
package batch

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bhashalab/bhasha/internal/atomicfile"
	"github.com/bhashalab/bhasha/internal/lines"
	"github.com/bhashalab/bhasha/runtime/cache"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
	"github.com/bhashalab/bhasha/runtime/run"
)

// Paths inside the run directory.
const (
	InputFile = "batch/input.jsonl"
	IndexFile = "batch/index.jsonl"
)

type inputLine struct {
	CustomID string          `json:"custom_id"`
	Method   string          `json:"method"`
	URL      string          `json:"url"`
	Body     json.RawMessage `json:"body"`
}

type indexLine struct {
	CustomID    string           `json:"custom_id"`
	Key         string           `json:"key"`
	Kind        engine.Kind      `json:"kind"`
	ServedModel string           `json:"served_model"`
	Identity    *engine.Identity `json:"identity,omitempty"` // the model identity the cache key was made for
}

// ExportReport counts what Export did.
type ExportReport struct {
	Pending, AlreadyRecorded, AlreadyCached int
	// Blocked counts later-stage requests whose first stage has no record
	// yet (export again after importing the first stage's output).
	Blocked      int
	Input, Index string
}

// Export writes the requests of the job j (built by its caller:
// experiment.Experiment.Job) that have neither a record in dir nor an
// answer in the cache, every stage whose input is recorded: a two-stage
// study is exported, imported, and exported again for its second stage.
// With live set it reads the servers' identities (as a run would);
// otherwise the identity comes from each model's root or served name, and
// is fixed in the index so that Import matches it.
func Export(ctx context.Context, j *run.Job, dir, cacheDir string, live bool) (ExportReport, error) {
	rep := ExportReport{Input: filepath.Join(dir, InputFile), Index: filepath.Join(dir, IndexFile)}
	if j == nil || j.Requests == nil {
		return rep, fmt.Errorf("batch export: no job to export")
	}
	lk, done, store, err := open(dir, cacheDir)
	if err != nil {
		return rep, err
	}
	defer lk.Unlock()
	defer store.Close()
	var eng *engine.Engine
	if live {
		eng, err = engine.New(ctx, j.Models, j.Engine)
	} else {
		eng, err = engine.NewOffline(j.Models, j.Engine)
	}
	if err != nil {
		return rep, fmt.Errorf("batch export: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(rep.Input), 0o755); err != nil {
		return rep, fmt.Errorf("batch export: %w", err)
	}
	in, err := newJSONL(rep.Input)
	if err != nil {
		return rep, err
	}
	defer in.f.Abort()
	idx, err := newJSONL(rep.Index)
	if err != nil {
		return rep, err
	}
	defer idx.f.Abort()
	prior, err := records.LoadOK(dir)
	if err != nil {
		return rep, err
	}
	identities := map[string]engine.Identity{}
	for _, mi := range eng.Models() {
		identities[mi.Name] = mi.Identity
	}
	for stage := 1; stage <= j.Stages; stage++ {
		for r, err := range j.Requests(stage, prior.Lookup, func(engine.Key) { rep.Blocked++ }) {
			if err != nil {
				return rep, err
			}
			key := r.Key.String()
			if done.Has(key) {
				rep.AlreadyRecorded++
				continue
			}
			p, err := eng.Prepare(r)
			if err != nil {
				return rep, err
			}
			if _, ok, _ := engine.Cached(store, p.CacheKey); ok {
				rep.AlreadyCached++
				continue
			}
			id := engine.HexKey(p.CacheKey)
			if err := in.put(inputLine{CustomID: id, Method: "POST", URL: "/v1/" + r.Kind.Path(), Body: p.Body}); err != nil {
				return rep, err
			}
			// The identity is recorded only when known (--live, or a pinned
			// root): a live run would refuse one the served name stood in for.
			var known *engine.Identity
			if ident := identities[r.Key.Model]; ident.Root != "" && ident.Root != ident.ID {
				known = &ident
			}
			if err := idx.put(indexLine{CustomID: id, Key: key, Kind: r.Kind, ServedModel: p.Served, Identity: known}); err != nil {
				return rep, err
			}
			rep.Pending++
		}
	}
	if err := in.close(); err != nil {
		return rep, err
	}
	return rep, idx.close()
}

// open locks dir exclusively (records.LockDir), prepares its records (the
// keys already answered) and opens the cache ("" for cache.DefaultDir()).
func open(dir, cacheDir string) (*records.Lock, *records.KeySet, *cache.Store, error) {
	lk, err := records.LockDir(dir, records.Exclusive)
	if err != nil {
		return nil, nil, nil, err
	}
	done, _, err := records.Prepare(dir)
	if err != nil {
		lk.Unlock()
		return nil, nil, nil, err
	}
	store, _, err := cache.Open(cacheDir)
	if err != nil {
		lk.Unlock()
		return nil, nil, nil, err
	}
	return lk, done, store, nil
}

type jsonl struct {
	f    *atomicfile.File
	w    *bufio.Writer
	enc  *json.Encoder
	path string
}

// newJSONL starts writing path atomically: nothing appears under its name
// until close succeeds.
func newJSONL(path string) (*jsonl, error) {
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, fmt.Errorf("batch export: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &jsonl{f: f, w: w, enc: enc, path: path}, nil
}

func (j *jsonl) put(v any) error {
	if err := j.enc.Encode(v); err != nil {
		return fmt.Errorf("writing %s: %w", j.path, err)
	}
	return nil
}

// close commits the file (f.Abort after it does nothing; after an error
// it removes the file).
func (j *jsonl) close() error {
	if err := j.w.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", j.path, err)
	}
	return j.f.Commit()
}

// ImportReport counts what Import did.
type ImportReport struct {
	OK, Failed, Skipped int
	// Simulated is true when a response says it came from a simulator
	// (system_fingerprint "simulated", as bhasha sim answers).
	Simulated bool
}

type outputLine struct {
	CustomID string `json:"custom_id"`
	Response *struct {
		StatusCode int             `json:"status_code"`
		Body       json.RawMessage `json:"body"`
	} `json:"response"`
	Error json.RawMessage `json:"error"`
}

// Import reads a batch output file into dir's records and the cache.
// Lines whose custom_id is not in the index are an error naming the line;
// requests already recorded are skipped.
func Import(ctx context.Context, dir, cacheDir, output string) (ImportReport, error) {
	var rep ImportReport
	index := map[string]indexLine{}
	ipath := filepath.Join(dir, IndexFile)
	f, err := os.Open(ipath)
	if err != nil {
		return rep, fmt.Errorf("batch import: reading the export's index: %w", err)
	}
	defer f.Close()
	sc := lines.New(f, ipath, 0)
	for sc.Scan() {
		var il indexLine
		if err := json.Unmarshal(sc.Bytes(), &il); err != nil {
			return rep, fmt.Errorf("%s line %d: %w", ipath, sc.Line(), err)
		}
		index[il.CustomID] = il
	}
	if err := sc.Err(); err != nil {
		return rep, err
	}
	lk, done, store, err := open(dir, cacheDir)
	if err != nil {
		return rep, err
	}
	defer lk.Unlock()
	defer store.Close()
	w, err := records.CreateWith(dir, records.Options{Lock: lk})
	if err != nil {
		return rep, err
	}
	err = importLines(ctx, output, ipath, index, done, store, w, &rep)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return rep, err
}

// importLines reads the batch output file into w and the cache (Import).
func importLines(ctx context.Context, output, ipath string, index map[string]indexLine, done *records.KeySet, store *cache.Store, w *records.Writer, rep *ImportReport) error {
	of, err := os.Open(output)
	if err != nil {
		return fmt.Errorf("batch import: %w", err)
	}
	defer of.Close()
	osc := lines.New(of, output, 0)
	for osc.Scan() {
		n := osc.Line()
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("batch import: %w", err)
		}
		if len(osc.Bytes()) == 0 {
			continue
		}
		var ol outputLine
		if err := json.Unmarshal(osc.Bytes(), &ol); err != nil {
			return fmt.Errorf("%s line %d: %w", output, n, err)
		}
		il, ok := index[ol.CustomID]
		if !ok {
			return fmt.Errorf("%s line %d: field \"custom_id\": %q was not exported to %s", output, n, ol.CustomID, ipath)
		}
		if done.Has(il.Key) {
			rep.Skipped++
			continue
		}
		fields, err := engine.ParseKey(il.Key)
		if err != nil {
			return fmt.Errorf("%s: %w", ipath, err)
		}
		rec := &engine.Record{Key: il.Key, Fields: fields, Kind: il.Kind, ServedModel: il.ServedModel,
			CacheKey: il.CustomID, Endpoint: "batch:" + filepath.Base(output), Attempts: 1, Identity: il.Identity}
		rec.Status = engine.StatusFailed
		switch {
		case len(ol.Error) > 0 && string(ol.Error) != "null":
			rec.Error = "batch error: " + string(ol.Error)
		case ol.Response == nil:
			rec.Error = "batch output has no response"
		case ol.Response.StatusCode != 200:
			rec.Error = fmt.Sprintf("batch response status %d: %s", ol.Response.StatusCode, ol.Response.Body)
		default:
			var fp struct {
				Fingerprint string `json:"system_fingerprint"`
				Model       string `json:"model"`
			}
			if json.Unmarshal(ol.Response.Body, &fp) == nil && fp.Fingerprint == "simulated" {
				rep.Simulated, rec.Simulated = true, true
			}
			res, err := engine.ParseResponse(il.Kind, ol.Response.Body)
			if err == nil && !answeredAs(fp.Model, il) {
				// The model that answered is checked as a live run checks
				// it: its served name, or the weights' root.
				err = fmt.Errorf("asked %s, the batch answered as %s", il.ServedModel, fp.Model)
			}
			if err != nil {
				rec.Error = fmt.Sprintf("%s line %d: %v", output, n, err)
				break
			}
			rec.Status = engine.StatusOK
			rec.SetResult(res)
			if b, err := hex.DecodeString(il.CustomID); err == nil && len(b) == 32 {
				v, _ := json.Marshal(res)
				if err := store.Put([32]byte(b), v); err != nil {
					return err
				}
			}
		}
		if rec.Status == engine.StatusOK {
			rep.OK++
		} else {
			rep.Failed++
		}
		done.Add(il.Key)
		if err := w.Write(rec); err != nil {
			return err
		}
	}
	return osc.Err()
}

// answeredAs reports whether a batch response's model ("" accepted) is
// the served name or the identity's root or id the request was exported for.
func answeredAs(model string, il indexLine) bool {
	if model == "" || model == il.ServedModel {
		return true
	}
	return il.Identity != nil && (model == il.Identity.Root || model == il.Identity.ID)
}
