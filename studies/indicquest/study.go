// Package indicquest is the multilingual factual QA study
// (L3Cube-IndicQuest): the protocol is v2's (Jain et al., arXiv
// 2608.15535, known from a summary of the paper only): each question
// asked in its own language (Protocol, stage 1), each answer judged by an
// LLM judge (stage 2, role judge), and scored by the judge's verdict
// beside exact substring, word overlap and the transliteration-aware
// match; v1 (Rohera et al., arXiv 2409.08706) gives the dataset's first
// release and the graded judge prompt (judge_prompt: v1), but no
// answering prompt, lexical criteria or rule from grades to a verdict. Its
// tables: accuracy, scoring (human agreement with human labels), judge
// agreement, verdicts by script, domains, protocol rankings.
package indicquest

import (
	"context"
	"embed"
	"math"
	"strconv"
	"strings"

	"github.com/bhashalab/bhasha/analysis/normalize"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/datasets/lang"
	"github.com/bhashalab/bhasha/study"
)

// Study is the multilingual factual QA study (L3Cube-IndicQuest), scored
// by an LLM judge beside exact substring and word overlap: YAML study:
// indicquest.
type Study struct{}

// Name is "indicquest".
func (Study) Name() string { return "indicquest" }

// About says what the study measures.
func (Study) About() string {
	return "multilingual factual QA in 20 languages, scored by an LLM judge beside exact substring and word overlap (IndicQuest)"
}

// Fields: the shared dataset, languages and human_labels (its own
// options: Options).
func (Study) Fields() []string {
	return []string{"dataset", "languages", "human_labels"}
}

// Check requires a judge and a dataset; judge_prompt is v1 or v2.
func (Study) Check(e *study.Experiment, c *study.Checker) {
	study.List(c, "languages", e.Languages, lang.New().Lookup)
	o := study.OptionsOf[Options](e)
	switch o.JudgePrompt {
	case "", "v1", "v2":
	default:
		c.Add([]string{"judge_prompt"}, "judge_prompt %q: want v1 or v2", o.JudgePrompt)
	}
	if e.Judge == nil {
		c.Add(nil, "study indicquest needs a judge (name, served_name)")
	}
	e.CheckDataset(c)
}

// Build reads the dataset and prepares the requests.
func (Study) Build(ctx context.Context, e *study.Experiment) (study.Plan, error) {
	set, err := e.LoadItems(ctx)
	if err != nil {
		return nil, err
	}
	o := study.OptionsOf[Options](e)
	p := &Protocol{Set: set, Languages: study.List(&study.Checker{}, "languages", e.Languages, lang.New().Lookup),
		Judge: e.Judge.Name, JudgeV1: o.JudgePrompt == "v1", JudgeDecoding: e.JudgeDecoding}
	var asked []string
	for _, l := range p.Languages {
		asked = append(asked, l.ISO3)
	}
	if err := e.CheckLanguages(set, asked); err != nil {
		return nil, err
	}
	return &plan{Protocol: p, e: e, o: o}, nil
}

type plan struct {
	*Protocol
	e *study.Experiment
	o *Options // the study's options
}

func (p *plan) Items() *study.Items { return p.Set }

// Metrics: the judge's verdict (correct), the lexical criteria, the
// transliteration-aware match and the unparsed verdicts.
func Metrics() []study.Metric {
	return append(append([]study.Metric{study.Correct()}, lexicalMetrics()...),
		study.Metric{Name: "judge_unparsed", Of: func(r *study.Row) bool { return !r.Failed && (r.Verdict == study.VerdictUnparsed || r.Verdict == "") }})
}

// paperLexical is the paper's preparation for the lexical criteria:
// case-insensitive (lower case), the outer spaces trimmed.
func paperLexical() study.Pipeline { return study.Pipeline{normalize.Lower, normalize.Trim} }

// Criteria documents the scoring criteria (scoring.csv), with the
// lexical normalisation in force.
func (p *plan) Criteria() []study.Criterion {
	lex, note := strings.Join(paperLexical(), "+"), " (the paper's case-insensitive rule; scoring.normalized_lexical applies Bhasha's full normalisation)"
	if p.o.Scoring.NormalizedLexical {
		lex, note = strings.Join(normalize.Default, "+"), " (scoring.normalized_lexical; the paper compares case-insensitively only)"
	}
	return []study.Criterion{
		{Name: "correct", Rule: "the judge's verdict (v2 is_correct; v1: Overall >= 3, Bhasha's threshold, since v1 publishes no rule from grades to a verdict; every criterion's grade in judge_grades); unparsed verdicts count as not correct and are listed"},
		{Name: "substring", Rule: "gold occurs as a contiguous substring of the answer compared (the parsed JSON answer, else the raw response), word boundaries ignored" + note, Normalization: lex},
		{Name: "overlap", Rule: "every gold word occurs among the words of the answer compared (the parsed JSON answer, else the raw response): words split at white space, each stripped at its edges of " + study.EdgePunctuation + " (match.EdgePunctuation)" + note, Normalization: lex},
		{Name: "translit", Rule: "the answer matches the gold within translit.Match's tolerance", Normalization: strings.Join(normalize.Default, "+") + "+iso15919+loose"},
	}
}

// Claims are the paper's conclusions the conclusions table checks under
// each alternative: the lexical criteria fall short of the judge (§5: by
// 17–25 points), as the effect judge rate − lexical rate over the same
// answers, with its paired 95% interval (stats.PairedDiffCI) and
// McNemar's exact two-sided p on the answers the two verdicts split (the
// paper asserts no significance: p is beside).
func Claims() []tables.Claim {
	shortfall := func(rows []*study.Row, v func(*study.Row) bool) tables.Outcome {
		if len(rows) == 0 {
			return tables.Effect(math.NaN())
		}
		judgeOnly, lexOnly := 0, 0
		for _, r := range rows {
			switch j, l := r.Correct, v(r); { // the judge's verdict, the criterion's
			case j && !l:
				judgeOnly++
			case l && !j:
				lexOnly++
			}
		}
		d, lo, hi := study.PairedDiffCI(lexOnly, judgeOnly, len(rows), 0.95) // d = (judgeOnly − lexOnly)/n
		return tables.Outcome{Effect: d, Lo: lo, Hi: hi, P: study.McNemarExact(judgeOnly, lexOnly)}
	}
	const test = "McNemar exact, two-sided, the judge against the criterion on the same answers"
	return []tables.Claim{
		{Name: "exact substring falls short of the judge (§5: 17–25 pp)", Measure: "substring", Eval: shortfall, TestName: test,
			Verdict: func(r *study.Row) bool { return r.Marks.Has(MarkSubstring) }},
		{Name: "word overlap falls short of the judge (§5: 17–25 pp)", Measure: "overlap", Eval: shortfall, TestName: test,
			Verdict: func(r *study.Row) bool { return r.Marks.Has(MarkOverlap) }},
	}
}

// Alternatives are the named options the sensitivity table re-scores
// with: the lexical criteria under the other normalisation, and the
// transliteration-aware match against the judge.
func (p *plan) Alternatives() []tables.Alternative {
	name, opt := "normalized_lexical", "scoring.normalized_lexical"
	if p.o.Scoring.NormalizedLexical {
		name, opt = "paper_lexical", "scoring.normalized_lexical off"
	}
	return []tables.Alternative{
		{Name: name, Option: opt, Rule: "exact substring under the other normalisation", Measure: "substring",
			Base: func(r *study.Row) bool { return r.Marks.Has(MarkSubstring) }, Of: func(r *study.Row) bool { return r.Marks.Has(MarkSubstringAlt) }},
		{Name: name, Option: opt, Rule: "word overlap under the other normalisation", Measure: "overlap",
			Base: func(r *study.Row) bool { return r.Marks.Has(MarkOverlap) }, Of: func(r *study.Row) bool { return r.Marks.Has(MarkOverlapAlt) }},
		{Name: "translit", Option: "(beside)", Rule: "the answer matches the gold within translit.Match's tolerance, against the judge",
			Of: func(r *study.Row) bool { return r.Marks.Has(MarkTranslit) }},
	}
}

// Tables: accuracy, scoring (scaling, human agreement when named), the
// judge against the lexical criteria, verdicts by script, domains and the
// protocols' ranking agreement.
func (p *plan) Tables(rows []study.Row, opt study.TableOptions) []*study.Table {
	dom := Domains(rows)
	ts := append(study.Standard(p.e.Study, Metrics(), p.Criteria(), rows, opt),
		JudgeAgreement(rows), tables.JudgeByScript(rows), dom, Rankings(rows), ModelGaps(rows), tables.Sensitivity(p.Alternatives(), rows),
		tables.Conclusions(Claims(), p.Alternatives(), rows))
	ts[0].Mirrors = "IndicQuest Table 4 (its English subset) and §5 (per language)" // accuracy
	wide := tables.Pivot("domains_wide", "accuracy per language and domain, models × protocols as columns", dom, nil,
		[]string{"language", "domain"}, []string{"model", "protocol"}, []string{"rate"}, nil)
	wide.Mirrors, wide.Headline = "IndicQuest Tables 4 and 7 (layout)", true
	wide.Chart = &tables.Chart{Keys: 2, Title: "accuracy per language and domain (one series per model and protocol column)"}
	ts = append(ts, wide)
	if p.JudgeV1 {
		ts = append(ts, JudgeGrades(rows))
	}
	if len(opt.Human) > 0 {
		h := tables.HumanAgreement(rows, opt.Human, append([]study.Metric{{Name: "llm_judge", Of: func(r *study.Row) bool { return r.Correct }}}, lexicalMetrics()...))
		h.Mirrors = "IndicQuest §5 (judge validation)"
		ts = append(ts, h)
	}
	return ts
}

// Score joins every answer with its judge's verdict (v2: is_correct; v1:
// Overall ≥ 3 is correct, Bhasha's threshold: v1's eval_prompt.txt asks
// for grades and publishes no cut) and its lexical matches, which compare
// the parsed answer (the JSON answer field the extraction read) or, when
// extraction failed, the raw response.
func (p *plan) Score(recs []*study.Record) ([]study.Row, error) {
	c := study.NewCommon(p.e.Abstain)
	verdicts := map[string]string{}
	grades := map[string]map[string]float64{}
	for _, r := range recs {
		if r.Fields.Role.Kind != study.RoleJudge || r.Status != study.StatusOK {
			continue
		}
		verdicts[r.Key] = verdict(r)
		if p.JudgeV1 && r.Extracted != nil && len(r.Extracted.Numbers) > 0 {
			grades[r.Key] = r.Extracted.Numbers
		}
	}
	inForce, other := paperLexical(), normalize.Default
	if p.o.Scoring.NormalizedLexical {
		inForce, other = other, inForce
	}
	var out []study.Row
	byID := p.Set.Index()
	for _, r := range recs {
		if r.Fields.Role.Kind != study.RoleAnswer {
			continue
		}
		it := byID[r.Fields.Item]
		if it == nil {
			continue
		}
		v, ok := it.Variant(r.Fields.Language, study.Form(r.Fields.Form))
		if !ok {
			continue
		}
		row := c.Row(r)
		row.Domain, row.Gold = it.Domain, v.Answer
		if row.Failed {
			out = append(out, row)
			continue
		}
		resp := row.Prediction
		if r.Extracted == nil || !r.Extracted.OK() {
			resp = r.Response
		}
		row.Marks.Set(MarkSubstring, study.Substring(resp, v.Answer, inForce))
		row.Marks.Set(MarkOverlap, study.WordOverlap(resp, v.Answer, inForce))
		row.Marks.Set(MarkSubstringAlt, study.Substring(resp, v.Answer, other))
		row.Marks.Set(MarkOverlapAlt, study.WordOverlap(resp, v.Answer, other))
		jk := study.JudgeKey(r.Fields, p.Judge).String()
		row.Verdict = verdicts[jk]
		if g := grades[jk]; g != nil {
			row.Detail = &study.Detail{JudgeScores: g}
		}
		row.Correct = row.Verdict == study.VerdictCorrect
		row.Marks.Set(MarkTranslit, study.TranslitMatch(resp, []string{v.Answer}))
		out = append(out, row)
	}
	return out, nil
}

// verdict reads a judge record: true/false (v2), or a grade ≥ 3 (v1,
// Bhasha's threshold: the 1–5 scale's midpoint).
func verdict(r *study.Record) string {
	if r.Extracted == nil || !r.Extracted.OK() {
		return study.VerdictUnparsed
	}
	switch strings.ToLower(r.Extracted.Value) {
	case "true":
		return study.VerdictCorrect
	case "false":
		return study.VerdictIncorrect
	}
	if f, err := strconv.ParseFloat(r.Extracted.Value, 64); err == nil {
		if f >= 3 {
			return study.VerdictCorrect
		}
		return study.VerdictIncorrect
	}
	return study.VerdictUnparsed
}

// Options are IndicQuest's own options (top-level keys of the experiment
// file); languages, the dataset and human_labels are shared fields of the
// experiment.
type Options struct {
	// JudgePrompt is v2 (binary is_correct, the default) or v1 (graded 1-5).
	JudgePrompt string `yaml:"judge_prompt"`
	// Scoring switches the lexical criteria from the paper's rule (the
	// default) to Bhasha's named alternative (YAML scoring:, a block
	// other studies declare with keys of their own).
	Scoring ScoringOptions `yaml:"scoring"`
}

// ScoringOptions are IndicQuest's named alternatives to the paper's
// scoring rules. They change how recorded answers are read, never what
// is asked.
type ScoringOptions struct {
	// NormalizedLexical compares the lexical criteria after Bhasha's full
	// normalisation (NFC, joiners, nukta, digits, every punctuation mark,
	// case folding) instead of the paper's case-insensitive comparison.
	NormalizedLexical bool `yaml:"normalized_lexical"`
}

// Options is a new zero Options: the study's YAML keys.
func (Study) Options() any { return new(Options) }

// WithScoring sets the scoring options (YAML scoring:).
func WithScoring(s ScoringOptions) study.Option {
	return study.Set(func(o *Options) { o.Scoring = s })
}

// publishedFS holds the numbers transcribed from the paper.
//
//go:embed published/*.csv
var publishedFS embed.FS

// The plan sets the run beside its paper (experiment.Publisher).
var _ study.Publisher = (*plan)(nil)

// Published reads the numbers transcribed from the paper, for the
// report's versus_paper table (experiment.Publisher).
func (p *plan) Published() ([]study.PublishedValue, error) { return Published() }

// Published reads the numbers transcribed from the paper
// (published/indicquest.csv).
func Published() ([]study.PublishedValue, error) {
	return study.ReadPublished(publishedFS, "published/*.csv")
}
