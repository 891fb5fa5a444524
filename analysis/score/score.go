// Package score holds what every study's scorer shares: the scored Row
// (one per answer: the study's strict criterion, its other criteria as
// Marks it names, its judge's verdict, abstention, script and script
// switch; no field is one study's), the fields every row reads the
// same way from its record (Common.Row), and the multiple-choice rules
// (MC1, ContinuationLogprob). Each study scores its own records with
// these (the built-in studies under studies/, a user's in its own
// package); re-scoring needs no new model request.
package score

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/bhashalab/bhasha/analysis/abstain"
	"github.com/bhashalab/bhasha/analysis/extract"
	"github.com/bhashalab/bhasha/analysis/script"
	"github.com/bhashalab/bhasha/datasets/lang"
	"github.com/bhashalab/bhasha/internal/memo"
	"github.com/bhashalab/bhasha/runtime/engine"
)

// Verdicts of an LLM judge.
const (
	VerdictCorrect   = "correct"
	VerdictIncorrect = "incorrect"
	VerdictUnparsed  = "unparsed"
)

// Row is one scored answer.
type Row struct {
	Key        engine.Key
	Domain     string // the study's grouping of its items (a domain, a relation)
	Gold       string
	Prediction string
	Method     extract.Method
	// Verdict is the study's LLM-judge verdict on this answer (its
	// judge's words: IndicQuest's correct, incorrect or unparsed, the
	// distractor study's semantic verdict on a switched answer), "" when
	// the answer was not judged.
	Verdict string
	Script  string // main script of the response
	// PromptTokens (the server's count), LatencyMS and Cached come from the record.
	PromptTokens int
	// OfflineTokens is the prompt's length under the model's tokenizer.json
	// (baseline rows of models with a tokenizer; 0 otherwise).
	OfflineTokens int
	LatencyMS     float64
	// Detail holds what few rows have (nil otherwise): a multiple-choice
	// item's per-choice log-likelihoods, a graded judge's scores.
	Detail *Detail
	// Marks are the study's other 0/1 criteria and flags (a lenient
	// criterion, a transliteration-aware match, a second abstention
	// rule), each named by the study.
	Marks Marks

	// Correct is the study's strict criterion: IndicKLAR the authors'
	// prefix (baselines) or candidate matcher, TriviaQA exact match against
	// all aliases, TruthfulQA MC1 with the original strict rule, IndicQuest
	// the judge's verdict.
	Correct bool
	// Abstain is the study's abstention rule in force (Common.Row sets the
	// 17 languages' phrases; a study may apply its own rule).
	Abstain  bool
	Switched bool // letters outside the scripts of the language asked
	// Failed: the request failed (or, Withheld, was never sent because its
	// first stage failed); the answer counts as wrong, as the authors'
	// scorers count a missing one, and the tables say how many.
	Failed, Withheld bool
	Cached           bool
	// EmptyResponse: the model produced an empty text (a real answer,
	// engine.Record.EmptyResponse), flagged in answers.csv.
	EmptyResponse bool
}

// MaxMarks bounds a study's marks (Marks is one word).
const MaxMarks = 64

// Marks are a row's 0/1 marks beside Correct, compactly: bit i is the
// study's i-th mark. The study names its bits (constants in its package,
// read by its answer schema through Mark); at most MaxMarks. A bit
// outside [0, MaxMarks) is a programming error and panics.
type Marks uint64

// Has reports whether mark i is set.
func (m Marks) Has(i int) bool { return m&bit(i) != 0 }

// Set sets mark i to v.
func (m *Marks) Set(i int, v bool) {
	b := bit(i)
	if v {
		*m |= b
	} else {
		*m &^= b
	}
}

// bit is mark i's bit; i outside [0, MaxMarks) panics.
func bit(i int) Marks {
	if uint(i) >= MaxMarks {
		panic(markError(i))
	}
	return 1 << uint(i)
}

// markError says which mark is out of range.
//
//go:noinline
func markError(i int) string { return fmt.Sprintf("score: mark %d outside [0, %d)", i, MaxMarks) }

// Detail is what only some rows carry.
type Detail struct {
	// ChoiceLogprobs are a multiple-choice item's log-likelihood per
	// choice (TruthfulQA MC1), and Chosen the index the model ranks first.
	ChoiceLogprobs []float64
	Chosen         int
	// JudgeScores are a graded judge's scores by criterion (IndicQuest's
	// v1 judge: the five criteria and Overall).
	JudgeScores map[string]float64
}

// Common reads the fields every study's row takes the same way from its
// record: key, failure, tokens, latency, cache, the extracted answer and
// its method, and the answer's script, script switch and abstention.
//
// A Common is safe for concurrent use, and remembers what it read of each
// answer text in each language (the texts repeat across a run's answers):
// make one per scoring pass.
type Common struct {
	reg  *lang.Registry
	abst *abstain.Detector
	text *memo.Memo[[2]string, textRead] // (answer, language) → what Row reads of it
}

// textRead is what Row reads of an answer's text.
type textRead struct {
	script             string
	switched, abstains bool
}

// NewCommon uses the built-in abstention phrases plus extra (per language
// code, as an experiment's abstain: field).
func NewCommon(extra map[string][]string) *Common {
	return &Common{reg: lang.New(), abst: abstain.New(extra), text: memo.New[[2]string, textRead](1 << 16)}
}

// Row is the part of r's row that does not depend on the study.
func (c *Common) Row(r *engine.Record) Row { return c.RowExtracted(r, r.Extracted) }

// RowExtracted is Row of r read as if r.Extracted were x (nil: no
// extraction): a scorer extracting each answer itself passes its result
// without storing it in the record. It keeps no reference to x.
func (c *Common) RowExtracted(r *engine.Record, x *extract.Result) Row {
	row := Row{Key: r.Fields, Failed: r.Status != engine.StatusOK, PromptTokens: r.PromptTokens, LatencyMS: r.LatencyMS, Cached: r.Cached,
		EmptyResponse: r.EmptyResponse}
	if x != nil {
		row.Method = x.Method
		row.Prediction = x.Value
	}
	// Script, switch and abstention describe the answer, not the JSON or
	// reasoning around it.
	k := [2]string{answerText(r.Response, x), r.Fields.Language}
	var t textRead
	if len(k[0]) > 256 { // a long answer seldom repeats: not worth holding
		t = c.readText(k)
	} else {
		t = c.text.Get(k, c.readText)
	}
	row.Script, row.Switched, row.Abstain = t.script, t.switched, t.abstains
	return row
}

// readText reads an answer's script, its switch out of the language's
// scripts and its abstention; k is (answer, language).
func (c *Common) readText(k [2]string) textRead {
	p := script.Detect(k[0])
	t := textRead{script: p.Main}
	if l, ok := c.reg.Find(k[1]); ok {
		t.switched = p.Switched(l)
	}
	t.abstains, _ = c.abst.Abstains(k[0])
	return t
}

// AnswerText is the text a record's answer is read from: the extracted
// value, or what the scorer falls back to when extraction failed (the
// trimmed output, as the IndicKLAR authors score it), or the raw response
// for records without an extraction.
func AnswerText(r *engine.Record) string { return answerText(r.Response, r.Extracted) }

// answerText is AnswerText of a record with response and extraction x.
func answerText(response string, x *extract.Result) string {
	switch {
	case x == nil:
		return response
	case x.OK():
		return x.Value
	}
	return x.Fallback
}

// MC1 scores one multiple-choice item from the choices' log-likelihoods:
// strict (TruthfulQA's original MC_calcs) is correct when the correct
// choice's score is strictly greater than every other; argmax
// (lm-evaluation-harness) takes the first maximum, so ties go to the
// correct choice when it comes first.
func MC1(scores []float64, correct int) (strict, argmax bool) {
	best := 0
	strict = true
	for i, s := range scores {
		if s > scores[best] {
			best = i
		}
		if i != correct && s >= scores[correct] {
			strict = false
		}
	}
	return strict, best == correct
}

// ContinuationLogprob sums the log-probabilities of the tokens that start
// at or after character offset ctxLen in an echoed completion's logprobs
// object {"tokens", "token_logprobs", "text_offset"}.
func ContinuationLogprob(raw json.RawMessage, ctxLen int) (float64, error) {
	var lp struct {
		TokenLogprobs []*float64 `json:"token_logprobs"`
		TextOffset    []int      `json:"text_offset"`
	}
	if err := json.Unmarshal(raw, &lp); err != nil || len(lp.TextOffset) != len(lp.TokenLogprobs) || len(lp.TextOffset) == 0 {
		return 0, fmt.Errorf("logprobs without matching token_logprobs and text_offset")
	}
	sum, n := 0.0, 0
	for i, off := range lp.TextOffset {
		if off >= ctxLen && lp.TokenLogprobs[i] != nil {
			sum += *lp.TokenLogprobs[i]
			n++
		}
	}
	if n == 0 {
		return math.Inf(-1), fmt.Errorf("no token after the context (offset %d)", ctxLen)
	}
	return sum, nil
}
