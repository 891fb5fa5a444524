package records

import (
	"bytes"
	"path/filepath"
	"slices"
	"unicode/utf8"

	"github.com/bhashalab/bhasha/runtime/engine"
)

// shadow writes the live file's Parquet segment while its records are
// written, from the records themselves rather than from their lines, so
// that a seal need not parse the file again. A shadow is used only when
// it holds every line of the live file (see Writer.sealNow); otherwise
// the seal converts the file (toParquet).
type shadow struct {
	seg    int
	recs   []shadowRec      // the records buffered by the Writer, not yet handed over
	batch  chan []shadowRec // the records written to the file, in order
	done   chan error       // the goroutine's end: nil once committed
	commit bool             // set before batch is closed: commit, or abort
	broken bool             // a write failed: the shadow no longer matches the file
}

// shadowRec is a record as written, and its line's seal.
type shadowRec struct {
	rec  engine.Record
	seal string
}

// newShadow starts the shadow of segment seg of dir.
func newShadow(dir string, seg int) (*shadow, error) {
	sw, err := newSegWriter(filepath.Join(dir, SegmentName(seg)), segGroupRows)
	if err != nil {
		return nil, err
	}
	sh := &shadow{seg: seg, batch: make(chan []shadowRec, 4), done: make(chan error, 1)}
	go sh.run(sw)
	return sh, nil
}

// run writes the batches' rows to sw, then commits or aborts it.
func (sh *shadow) run(sw *segWriter) {
	e := newLineEncoder()
	var err error
	for recs := range sh.batch {
		for i := range recs {
			if err == nil {
				var row segRow
				if row, err = e.rowOfRecord(&recs[i].rec, recs[i].seal); err == nil {
					err = sw.add(row, true)
				}
			}
		}
	}
	if err == nil && sh.commit {
		err = sw.commit()
	} else {
		sw.tmp.Abort()
	}
	sh.done <- err
}

// handOver passes the records buffered so far to the goroutine.
func (sh *shadow) handOver() {
	if len(sh.recs) > 0 && !sh.broken {
		sh.batch <- sh.recs
	}
	sh.recs = nil
}

// finish ends the shadow: its segment committed (when commit and it is
// not broken) or its temporary file removed. It returns whether the
// segment was committed, and the error that kept it from being so.
func (sh *shadow) finish(commit bool) (bool, error) {
	sh.commit = commit && !sh.broken
	close(sh.batch)
	err := <-sh.done
	return sh.commit && err == nil, err
}

// rowOfRecord is the row of r's line whose seal is seal: rowOf of that
// line, built from r itself where the line gives r back as it is (valid
// UTF-8 throughout, no raw JSON members but the request), from the line
// otherwise.
func (e *lineEncoder) rowOfRecord(r *engine.Record, seal string) (segRow, error) {
	texts := []string{r.Key, string(r.Kind), r.ServedModel, r.Status, r.Error, r.Response, r.Reasoning,
		r.FinishReason, r.Endpoint, r.CacheKey, r.Refusal, r.RequestSHA256}
	if len(r.Logprobs)+len(r.PromptLogprobs)+len(r.ToolCalls) == 0 && !slices.ContainsFunc(texts, func(s string) bool { return !utf8.ValidString(s) }) {
		row, err := newRow(r, seal)
		// json.Marshal writes invalid UTF-8 as \ufffd.
		if err == nil && !slices.ContainsFunc([][]byte{row.FieldsJSON, row.IdentityJSON, row.ExtractedJSON},
			func(b []byte) bool { return bytes.Contains(b, []byte(`\ufffd`)) }) {
			return row, nil
		}
	}
	line, err := e.line(r, seal)
	if err != nil {
		return segRow{}, err
	}
	return e.rowOf(slices.Clone(line))
}
