// Package score turns a run's records into scored rows: one per answer,
// with the study's strict criterion (the authors' code), the
// transliteration-aware match beside it, abstention, script and script
// switch. Re-scoring needs no new model request: everything comes from
// records.jsonl and the experiment's dataset.
package score

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/bhashalab/bhasha/analysis/abstain"
	"github.com/bhashalab/bhasha/analysis/bpe"
	"github.com/bhashalab/bhasha/analysis/extract"
	"github.com/bhashalab/bhasha/analysis/match"
	"github.com/bhashalab/bhasha/analysis/normalize"
	"github.com/bhashalab/bhasha/analysis/script"
	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/lang"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
	"github.com/bhashalab/bhasha/studies/experiment"
	"github.com/bhashalab/bhasha/studies/protocol"
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
	Domain     string // IndicQuest domain; KLAR relation
	Gold       string
	Prediction string
	Method     extract.Method
	// Correct is the study's strict criterion: IndicKLAR the authors'
	// prefix (baselines) or candidate matcher, TriviaQA exact match against
	// all aliases, TruthfulQA MC1 with the original strict rule, IndicQuest
	// the judge's verdict.
	Correct bool
	// Lenient is the alternative criterion: lm-eval's argmax (ties to the
	// correct choice) for MC1, none elsewhere (equal to Correct).
	Lenient bool
	// Translit is the transliteration-aware match (reported beside Correct).
	Translit bool
	// SQuAD is exact match under SQuAD's normalisation (distractor study).
	SQuAD bool
	// Substring and Overlap are IndicQuest's lexical criteria.
	Substring, Overlap bool
	// Judge is the IndicQuest verdict (correct, incorrect, unparsed, or ""
	// when the verdict is missing).
	Judge string
	// Semantic is the distractor study's semantic verdict on a switched
	// answer (CORRECT, WRONG, ABSTAIN, unparsed, or "" when not judged).
	Semantic string
	Abstain  bool
	Script   string // main script of the response
	Switched bool   // letters outside the scripts of the language asked
	// DistractorSwitch is the distractor study's rule (any Devanagari or CJK).
	DistractorSwitch bool
	Failed           bool // the request failed: not scored, counted apart
	// PromptTokens (the server's count), LatencyMS and Cached come from the record.
	PromptTokens int
	// OfflineTokens is the prompt's length under the model's tokenizer.json
	// (baseline rows of models with a tokenizer; 0 otherwise).
	OfflineTokens int
	LatencyMS     float64
	Cached        bool
	// EmptyResponse: the model produced an empty text (a real answer,
	// engine.Record.EmptyResponse), flagged in answers.csv.
	EmptyResponse bool
}

// Score reads dir/records.jsonl and scores every answer of exp, one per
// key: when a key was recorded more than once (a directory two runs wrote
// into at once), records.ReadUnique keeps one and the returned Duplicates
// say how many were dropped and which keys they were.
func Score(exp *experiment.Experiment, dir string) ([]Row, records.Duplicates, error) {
	set := exp.Items()
	if set == nil {
		return nil, records.Duplicates{}, fmt.Errorf("scoring %s: experiment %s is not a study", dir, exp.Name)
	}
	byID := map[string]*item.Item{}
	for _, it := range set.Items {
		byID[it.ID] = it
	}
	recs, dups, err := records.ReadUnique(dir, false)
	if err != nil {
		return nil, dups, err
	}
	for _, r := range recs {
		// Records imported from a batch, or written before a rule changed,
		// are read now with the study's extraction.
		exp.Extract(r)
	}
	rows, err := score(exp, byID, recs)
	return rows, dups, err
}

func score(exp *experiment.Experiment, byID map[string]*item.Item, recs []*engine.Record) ([]Row, error) {
	s := &scorer{exp: exp, byID: byID, reg: lang.New(), abst: abstain.New(exp.Abstain)}
	switch exp.Study {
	case experiment.StudyIndicKLAR:
		rows := s.indicklar(recs)
		if err := offlineTokens(exp, rows); err != nil {
			return nil, err
		}
		return rows, nil
	case experiment.StudyMDI:
		return s.mdi(recs)
	case experiment.StudyIndicQuest:
		return s.indicquest(recs), nil
	}
	return nil, fmt.Errorf("scoring: unknown study %q", exp.Study)
}

type scorer struct {
	exp  *experiment.Experiment
	byID map[string]*item.Item
	reg  *lang.Registry
	abst *abstain.Detector
}

// variant finds the item and variant a record asked about.
func (s *scorer) variant(r *engine.Record) (*item.Item, *item.Variant, bool) {
	it := s.byID[r.Fields.Item]
	if it == nil {
		return nil, nil, false
	}
	v, ok := it.Variant(r.Fields.Language, item.Form(r.Fields.Form))
	return it, v, ok
}

func (s *scorer) base(r *engine.Record) Row {
	row := Row{Key: r.Fields, Failed: r.Status != engine.StatusOK, PromptTokens: r.PromptTokens, LatencyMS: r.LatencyMS, Cached: r.Cached,
		EmptyResponse: r.EmptyResponse}
	if r.Extracted != nil {
		row.Method = r.Extracted.Method
		row.Prediction = r.Extracted.Value
	}
	// Script, switch and abstention describe the answer, not the JSON or
	// reasoning around it.
	ans := answerText(r)
	p := script.Detect(ans)
	row.Script, row.DistractorSwitch = p.Main, script.DistractorSwitch(ans)
	if l, err := s.reg.Lookup(r.Fields.Language); err == nil {
		row.Switched = p.Switched(l)
	}
	row.Abstain, _ = s.abst.Abstains(ans)
	return row
}

// answerText is the text a record's answer is read from: the extracted
// value, or what the scorer falls back to when extraction failed (the
// trimmed output, as the IndicKLAR authors score it), or the raw response
// for records without an extraction.
func answerText(r *engine.Record) string {
	switch {
	case r.Extracted == nil:
		return r.Response
	case r.Extracted.OK():
		return r.Extracted.Value
	}
	return r.Extracted.Fallback
}

func (s *scorer) indicklar(recs []*engine.Record) []Row {
	var out []Row
	for _, r := range recs {
		st, err := protocol.ParseStrategy(r.Fields.Strategy)
		if err != nil || (st.Stages() == 2 && r.Fields.Stage == "1") {
			continue // translations are kept, not scored
		}
		it, v, ok := s.variant(r)
		if !ok {
			continue
		}
		row := s.base(r)
		row.Domain = it.Relation
		gold, cands := v.Answer, v.StoredCandidates
		if st == protocol.ContextEN {
			if en, ok := it.Variant("eng", item.English); ok {
				gold, cands = en.Answer, en.StoredCandidates
			}
		}
		row.Gold = gold
		if row.Failed {
			out = append(out, row)
			continue
		}
		pred := row.Prediction
		if r.Extracted != nil && !r.Extracted.OK() {
			pred = r.Extracted.Fallback // the authors score the raw text when JSON fails
			row.Prediction = pred
		}
		if st == protocol.Baseline || len(cands) == 0 {
			row.Correct = match.Prefix(pred, gold, normalize.Authors)
		} else {
			_, row.Correct = match.Candidate(pred, cands, gold, normalize.Authors)
		}
		row.Lenient = row.Correct
		row.Translit = row.Correct || match.Translit(pred, []string{gold})
		out = append(out, row)
	}
	return out
}

func (s *scorer) indicquest(recs []*engine.Record) []Row {
	verdicts := map[string]string{}
	judge := ""
	if s.exp.Judge != nil {
		judge = s.exp.Judge.Name
	}
	for _, r := range recs {
		if r.Fields.Strategy != "judge" || r.Status != engine.StatusOK {
			continue
		}
		v := VerdictUnparsed
		if r.Extracted != nil && r.Extracted.OK() {
			switch strings.ToLower(r.Extracted.Value) {
			case "true":
				v = VerdictCorrect
			case "false":
				v = VerdictIncorrect
			default:
				if f, err := strconv.ParseFloat(r.Extracted.Value, 64); err == nil { // v1: Overall ≥ 3 counts as correct
					v = VerdictIncorrect
					if f >= 3 {
						v = VerdictCorrect
					}
				}
			}
		}
		verdicts[r.Key] = v
	}
	var out []Row
	for _, r := range recs {
		if r.Fields.Strategy != "answer" {
			continue
		}
		it, v, ok := s.variant(r)
		if !ok {
			continue
		}
		row := s.base(r)
		row.Domain, row.Gold = it.Domain, v.Answer
		if row.Failed {
			out = append(out, row)
			continue
		}
		resp := row.Prediction
		if r.Extracted == nil || !r.Extracted.OK() {
			resp = r.Response
		}
		row.Substring = match.Substring(resp, v.Answer, normalize.Default)
		row.Overlap = match.WordOverlap(resp, v.Answer, normalize.Default)
		row.Judge = verdicts[protocol.JudgeKey(r.Fields, judge).String()]
		row.Correct = row.Judge == VerdictCorrect
		row.Lenient = row.Correct
		row.Translit = match.Translit(resp, []string{v.Answer})
		out = append(out, row)
	}
	return out
}

func (s *scorer) mdi(recs []*engine.Record) ([]Row, error) {
	var out []Row
	type mcKey struct{ model, item, cond string }
	mc := map[mcKey][]float64{}
	mcFail := map[mcKey]bool{}
	var mcOrder []mcKey
	p, _ := s.exp.Protocol().(*protocol.MDI)
	semantic := map[string]string{}
	for _, r := range recs {
		if r.Fields.Strategy == "semantic-judge" && r.Status == engine.StatusOK {
			v := VerdictUnparsed
			if r.Extracted != nil && r.Extracted.OK() {
				v = r.Extracted.Value
			}
			semantic[r.Key] = v
		}
	}
	judge := ""
	if p != nil {
		judge = p.Judge
	}
	for _, r := range recs {
		if r.Fields.Strategy == "semantic-judge" {
			continue
		}
		it := s.byID[r.Fields.Item]
		if it == nil {
			continue
		}
		v, _ := it.Variant("eng", item.English)
		if r.Fields.Strategy == "mc1" {
			k := mcKey{r.Fields.Model, r.Fields.Item, r.Fields.Condition}
			if _, seen := mc[k]; !seen {
				mc[k] = make([]float64, len(it.Choices))
				mcOrder = append(mcOrder, k)
			}
			i, err := strconv.Atoi(strings.TrimPrefix(r.Fields.Stage, "choice-"))
			if err != nil || i >= len(it.Choices) {
				return nil, fmt.Errorf("record %s: bad choice stage", r.Key)
			}
			if r.Status != engine.StatusOK || p == nil {
				mcFail[k] = true
				continue
			}
			ctx, err := p.MCContext(v.Question, protocol.Condition(r.Fields.Condition))
			if err != nil {
				return nil, err
			}
			lp, err := ContinuationLogprob(r.Logprobs, len([]rune(ctx)))
			if err != nil {
				return nil, fmt.Errorf("record %s: %w", r.Key, err)
			}
			mc[k][i] = lp
			continue
		}
		row := s.base(r)
		golds := v.Golds()
		row.Gold = v.Answer
		if judge != "" {
			row.Semantic = semantic[protocol.SemanticJudgeKey(r.Fields, judge).String()]
		}
		if !row.Failed {
			ans := protocol.Answer(r.Response)
			row.Prediction = ans
			row.Correct = match.ExactMatch(ans, golds)
			row.SQuAD = match.ExactMatchSQuAD(ans, golds)
			row.Lenient = row.Correct
			row.Translit = row.Correct || match.Translit(ans, golds)
		}
		out = append(out, row)
	}
	for _, k := range mcOrder {
		it := s.byID[k.item]
		row := Row{Key: engine.Key{Experiment: s.exp.Name, Model: k.model, Item: k.item, Language: "eng", Form: string(item.English), Strategy: "mc1", Condition: k.cond},
			Gold: it.Choices[it.Correct], Failed: mcFail[k]}
		if !row.Failed {
			row.Correct, row.Lenient = MC1(mc[k], it.Correct)
		}
		out = append(out, row)
	}
	return out, nil
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

// offlineTokens counts, for the baseline rows of every model that names a
// tokenizer.json, the prompt's tokens offline (raw completion prompts as
// sent; chat prompts as the concatenated message texts, without a chat
// template). The prompts are rebuilt from the experiment, not stored.
func offlineTokens(exp *experiment.Experiment, rows []Row) error {
	toks := map[string]*bpe.Tokenizer{}
	for _, m := range exp.Models {
		if p := exp.TokenizerPath(m); p != "" {
			t, err := bpe.Load(p)
			if err != nil {
				return err
			}
			toks[m.Name] = t
		}
	}
	if len(toks) == 0 {
		return nil
	}
	want := map[string]int{}
	for i, r := range rows {
		if toks[r.Key.Model] != nil && (r.Key.Strategy == string(protocol.Baseline) || r.Key.Strategy == string(protocol.BaselineCands)) {
			want[r.Key.String()] = i
		}
	}
	for req, err := range exp.StreamStage(1, nil, nil) {
		if err != nil {
			return err
		}
		i, ok := want[req.Key.String()]
		if !ok {
			continue
		}
		text := req.Prompt
		for _, m := range req.Messages {
			text += m.Content
		}
		n, err := toks[req.Key.Model].Count(text)
		if err != nil {
			return fmt.Errorf("counting tokens of %s: %w", req.Key, err)
		}
		rows[i].OfflineTokens = n
	}
	return nil
}
