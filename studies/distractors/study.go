// Package distractors is the prompt-contamination study (multilingual
// distractor interference, Marwah et al. 2026; YAML study: mdi): an
// "ignore this" note in Spanish, Hindi or Chinese (or an unrelated
// paragraph) before an English TriviaQA question or TruthfulQA MC1 item
// (Protocol, the eight Conditions), a semantic judge for the answers that
// switched script (stage 2), scored by TriviaQA exact match and MC1, with
// abstention, the hallucination proxy and the script switch. Its tables:
// accuracy, scoring, condition tests, the script-vs-semantic
// decomposition, verdicts by script.
package distractors

import (
	"context"
	"embed"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/bhashalab/bhasha/analysis/abstain"
	"github.com/bhashalab/bhasha/analysis/normalize"
	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/script"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/study"
)

// Study is the prompt-contamination study (multilingual distractor
// interference, Marwah et al. 2026): YAML study: mdi.
type Study struct{}

// Name is "mdi".
func (Study) Name() string { return "mdi" }

// About says what the study measures.
func (Study) About() string {
	return "prompt contamination: an \"ignore this\" note in Hindi, Spanish or Chinese before an English question (TriviaQA, TruthfulQA MC1)"
}

// Fields: the shared dataset and human_labels (its own options: Options).
func (Study) Fields() []string {
	return []string{"dataset", "human_labels"}
}

// Check parses the conditions (default: all eight) and the notes' languages.
func (Study) Check(e *study.Experiment, c *study.Checker) {
	o := study.OptionsOf[Options](e)
	study.List(c, "conditions", o.Conditions, ParseCondition)
	if o.Scoring.MultilingualAbstain && o.Scoring.RerunAbstain {
		c.Add([]string{"scoring", "rerun_abstain"}, "scoring: multilingual_abstain and rerun_abstain are two abstention rules: set one")
	}
	for k := range o.Notes {
		if k != "es" && k != "hi" && k != "zh" {
			c.Add([]string{"notes", k}, "notes: unknown language %q (want es, hi or zh)", k)
		}
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
	conds := study.List(&study.Checker{}, "conditions", o.Conditions, ParseCondition)
	if len(conds) == 0 {
		conds = Conditions
	}
	p := &Protocol{Set: set, Conditions: conds, Notes: o.Notes, Paragraph: o.Paragraph, MaxTokens: e.Decoding.MaxTokens, JudgeDecoding: e.JudgeDecoding}
	if e.Judge != nil {
		p.Judge = e.Judge.Name
	}
	return &plan{Protocol: p, e: e, o: o}, nil
}

type plan struct {
	*Protocol
	e *study.Experiment
	o *Options // the study's options
}

func (p *plan) Items() *study.Items { return p.Set }

// generated limits a metric to generated answers (mc1 choices have no text).
func generated(strategy string) bool { return strategy != StrategyMC1 }

// Metrics: exact match (correct), MC1's argmax beside it (lenient), SQuAD
// exact match, the transliteration-aware match, abstention, the paper's
// hallucination proxy and the script switch.
func Metrics() []study.Metric {
	return []study.Metric{study.Correct(),
		{Name: "lenient", Of: func(r *study.Row) bool { return r.Marks.Has(MarkLenient) }},
		{Name: "squad_em", Of: func(r *study.Row) bool { return r.Marks.Has(MarkSQuAD) }, Applies: generated},
		{Name: "translit", Of: func(r *study.Row) bool { return r.Marks.Has(MarkTranslit) }, Applies: generated},
		{Name: "abstain", Of: func(r *study.Row) bool { return !r.Correct && r.Abstain }, Applies: generated},
		{Name: "hallucination", Of: func(r *study.Row) bool { return !r.Correct && !r.Abstain }, Applies: generated},
		{Name: "distractor_switch", Of: func(r *study.Row) bool { return r.Marks.Has(MarkDistractorSwitch) }, Applies: generated}}
}

// abstainRule is one abstention rule: its name as an alternative, the
// option that puts it in force, what it decides, and its mark.
type abstainRule struct {
	name, option, doc string
	mark              int
}

// abstainRules are the three rules: the default English list, the 17
// languages' (scoring.multilingual_abstain) and the rerun's two phrases
// (scoring.rerun_abstain).
func abstainRules() []abstainRule {
	return []abstainRule{
		{"english_abstain", "scoring.multilingual_abstain and scoring.rerun_abstain off", "an English abstention phrase occurs after normalize.Default (abstain.Phrases[\"eng\"], 13: the paper's \"I don't know\", \"unknown\" and Bhasha's reading of its unpublished \"related phrases\") + experiment abstain:", MarkAbstainEnglish},
		{"multilingual_abstain", "scoring.multilingual_abstain", "an abstention phrase of any of 17 languages occurs after normalize.Default (abstain.Phrases) + experiment abstain:", MarkAbstainMultilingual},
		{"rerun_abstain", "scoring.rerun_abstain", "exactly \"i don't know\" or \"unknown\" occurs in the answer lower-cased (the rerun's scorer; no experiment abstain:)", MarkAbstainRerun},
	}
}

// abstainInForce is the abstention rule in force.
func (s ScoringOptions) abstainInForce() abstainRule {
	rs := abstainRules()
	switch {
	case s.MultilingualAbstain:
		return rs[1]
	case s.RerunAbstain:
		return rs[2]
	}
	return rs[0]
}

// RerunAbstains is the independent rerun's abstention rule (002_…txt):
// "i don't know" or "unknown" occurs in answer lower-cased (strings.ToLower;
// no other normalisation, so "I don’t know" with a curly apostrophe does
// not abstain).
func RerunAbstains(answer string) bool {
	a := strings.ToLower(answer)
	return strings.Contains(a, "i don't know") || strings.Contains(a, "unknown")
}

// Alternatives are the named options the sensitivity table re-scores with:
// each abstention rule not in force (abstention and hallucination move
// together) and the transliteration-aware match.
func (p *plan) Alternatives() []tables.Alternative {
	var out []tables.Alternative
	for _, a := range abstainRules() {
		if a.mark == p.o.Scoring.abstainInForce().mark {
			continue
		}
		other := func(r *study.Row) bool { return r.Marks.Has(a.mark) }
		out = append(out,
			tables.Alternative{Name: a.name, Option: a.option, Rule: "abstention: " + a.doc, Measure: "abstain", Applies: generated,
				Base: func(r *study.Row) bool { return !r.Correct && r.Abstain }, Of: func(r *study.Row) bool { return !r.Correct && other(r) }},
			tables.Alternative{Name: a.name, Option: a.option, Rule: "hallucination proxy with abstention: " + a.doc, Measure: "hallucination", Applies: generated,
				Base: func(r *study.Row) bool { return !r.Correct && !r.Abstain }, Of: func(r *study.Row) bool { return !r.Correct && !other(r) }})
	}
	return append(out, tables.Alternative{Name: "translit", Option: "(beside)", Rule: "correct, or the answer matches an alias within translit.Match's tolerance", Applies: generated,
		Of: func(r *study.Row) bool { return r.Marks.Has(MarkTranslit) }})
}

// The paper's five models, by the served names its text implies (a run's
// model is the paper's when its served name equals one, case aside).
const (
	PaperLlama31_8B = "meta-llama/Llama-3.1-8B-Instruct"
	PaperLlama32_3B = "meta-llama/Llama-3.2-3B-Instruct"
	PaperPhi3Mini   = "microsoft/Phi-3-mini-4k-instruct"
	PaperMistral7B  = "mistralai/Mistral-7B-Instruct-v0.2"
	PaperQwen25_3B  = "Qwen/Qwen2.5-3B-Instruct"
)

// PaperModel is the paper's model a served name is (one of the Paper*
// constants), or "" when it is none of them.
func PaperModel(served string) string {
	for _, m := range []string{PaperLlama31_8B, PaperLlama32_3B, PaperPhi3Mini, PaperMistral7B, PaperQwen25_3B} {
		if strings.EqualFold(strings.TrimSpace(served), m) {
			return m
		}
	}
	return ""
}

// SwitchBound is the most the paper's four other models switch to
// Devanagari under the Hindi note: "at most 1.2%", read as below 1.25%
// (what rounds to 1.2% or less).
const SwitchBound = 0.0125

// Claims are the paper's conclusions the conclusions table checks under
// each alternative, per model as the paper makes them (paper maps a
// run's model name to its paper model, PaperModel; "" for a model the
// paper did not run, which is checked for the claim of every model only);
// each claim's name says what it asserts and where the paper does. Every
// claim but the switch bound (effect = SwitchBound − switch rate, its
// interval from the rate's Wilson interval, no test) is a
// tables.PairedClaim on the same item (strategy and item) under the two
// conditions, McNemar's p beside; only Llama-3.2-3B's drops assert
// significance (p < 0.05, on whichever of TriviaQA and MC1 the run
// asked). The paper's statement that no single-sentence drop is
// significant (which contradicts them) is not checked. The TriviaQA claims
// read strategy qa.
func Claims(paper func(model string) string) []tables.Claim {
	cond := func(c Condition, qa bool) func(*study.Row) bool {
		return func(r *study.Row) bool { return r.Key.Condition == string(c) && (!qa || r.Key.Strategy == StrategyQA) }
	}
	key := func(r *study.Row) string { return r.Key.Strategy + "\x00" + r.Key.Item }
	const pairs = "strategy and item"
	is := func(ms ...string) func(string) bool {
		return func(model string) bool { return slices.Contains(ms, paper(model)) }
	}
	verdicts := map[string]func(*study.Row) bool{} // the rules in force
	for _, m := range Metrics() {
		verdicts[m.Name] = m.Of
	}
	llama8 := is(PaperLlama31_8B)
	four := is(PaperLlama32_3B, PaperPhi3Mini, PaperMistral7B, PaperQwen25_3B)
	with := func(c tables.Claim, models func(string) bool) tables.Claim {
		c.Models, c.Verdict = models, verdicts[c.Measure]
		return c
	}
	cs := []tables.Claim{
		with(tables.PairedClaim("the paragraph raises abstention (every model; Table 4)", "abstain", cond(Paragraph, true), cond(Clean, true), key, pairs, false), nil),
		with(tables.PairedClaim("the Hindi note switches answers to Devanagari (Llama-3.1-8B; §5, §5.3: 58.2%)", "distractor_switch", cond(Hindi, true), cond(Clean, true), key, pairs, false), llama8),
		with(tables.PairedClaim("the Hindi note raises the hallucination proxy (Llama-3.1-8B; Table 3: 0.416 → 0.710)", "hallucination", cond(Hindi, true), cond(Clean, true), key, pairs, false), llama8),
		with(tables.PairedClaim("the Hindi note lowers exact match (Llama-3.1-8B; Table 3: 0.518 → 0.228)", "", cond(Clean, true), cond(Hindi, true), key, pairs, false), llama8),
		{Name: fmt.Sprintf("under %.2f%% of answers switch to Devanagari under the Hindi note (the four other models; §5: at most 1.2%%)", 100*SwitchBound), Measure: "distractor_switch",
			On: cond(Hindi, true), Models: four, Verdict: verdicts["distractor_switch"], Eval: func(rows []*study.Row, v func(*study.Row) bool) tables.Outcome {
				k, n := 0, 0
				for _, r := range rows {
					if cond(Hindi, true)(r) {
						n++
						if v(r) {
							k++
						}
					}
				}
				if n == 0 {
					return tables.Effect(math.NaN())
				}
				lo, hi := study.Wilson(k, n, 0.95) // the bound minus the switch rate's interval
				return tables.Outcome{Effect: SwitchBound - float64(k)/float64(n), Lo: SwitchBound - hi, Hi: SwitchBound - lo, P: math.NaN()}
			}},
		with(tables.PairedClaim("the Hindi note raises abstention (the four other models; §5: Qwen2.5-3B 0.352 → 0.730)", "abstain", cond(Hindi, true), cond(Clean, true), key, pairs, false), four),
	}
	for _, c := range Conditions {
		if c == Clean {
			continue
		}
		cs = append(cs, with(tables.PairedClaim(fmt.Sprintf("the %s note lowers exact match significantly (Llama-3.2-3B; §5.1, Table 2)", c), "", cond(Clean, false), cond(c, false), key, pairs, true),
			is(PaperLlama32_3B)))
	}
	return cs
}

// conclusions is the conclusions table of the paper's claims, the run's
// models mapped to the paper's by served name (PaperModel).
func (p *plan) conclusions(rows []study.Row) *study.Table {
	paper := map[string]string{}
	var others []string
	for _, x := range p.e.Models {
		if pm := PaperModel(x.ServedName); pm != "" {
			paper[x.Name] = pm
		} else {
			others = append(others, x.Name)
		}
	}
	t := tables.Conclusions(Claims(func(model string) string { return paper[model] }), p.Alternatives(), rows)
	if len(others) > 0 {
		t.Note = "not the paper's models (served name none of its five): " + strings.Join(others, ", ") + "; only the claim of every model is checked for them"
	}
	return t
}

// Criteria documents the scoring criteria (scoring.csv), with the
// abstention rule in force.
func (p *plan) Criteria() []study.Criterion {
	def := strings.Join(normalize.Default, "+")
	r, abstainNorm := p.o.Scoring.abstainInForce(), def
	if r.mark == MarkAbstainRerun {
		abstainNorm = "lower-case"
	}
	return []study.Criterion{
		{Name: "correct", Rule: "TriviaQA exact match of the whole response, trimmed (extraction method text), against value, aliases and normalized aliases (official normalize_answer); mc1: correct choice strictly above every other (TruthfulQA MC_calcs)", Normalization: "triviaqa-normalize"},
		{Name: "lenient", Rule: "mc1: argmax with ties to the first (lm-evaluation-harness)"},
		{Name: "squad_em", Rule: "exact match after SQuAD v1.1's normalize_answer (punctuation deleted)", Normalization: "squad-normalize"},
		{Name: "abstain", Rule: "not correct and " + r.doc + " (" + r.option + "; the others are in the sensitivity table)", Normalization: abstainNorm},
		{Name: "hallucination", Rule: "neither correct nor abstaining (the paper's proxy)"},
		{Name: "distractor_switch", Rule: "the answer has a character of the Devanagari block (U+0900-U+097F) or the CJK Unified Ideographs block (U+4E00-U+9FFF); the same rule picks the answers the semantic judge reads"},
		{Name: "translit", Rule: "correct, or the prediction matches an alias within translit.Match's tolerance", Normalization: def + "+iso15919+loose"},
	}
}

// Tables: accuracy, scoring (scaling with model sizes), each condition
// against clean, the script decomposition and the verdicts by script.
func (p *plan) Tables(rows []study.Row, opt study.TableOptions) []*study.Table {
	ts := append(study.Standard(p.e.Study, Metrics(), p.Criteria(), rows, opt),
		ConditionTests(Metrics(), rows, p.o.Scoring.UnpairedTests), Decomposition(rows), tables.JudgeByScript(rows), tables.Sensitivity(p.Alternatives(), rows),
		p.conclusions(rows))
	acc := ts[0]
	acc.Mirrors = "distractor study Tables 2–3"
	wide := tables.Pivot("conditions_wide", "accuracy, abstention, hallucination proxy and script switch per model, conditions as columns", acc,
		func(t *study.Table, r []any) bool {
			m := t.Str(r, "metric")
			return t.Str(r, "strategy") != StrategyMC1 && (m == "correct" || m == "abstain" || m == "hallucination" || m == "distractor_switch")
		}, []string{"model", "strategy", "metric"}, []string{"condition"}, []string{"rate"}, conditionNames())
	wide.Mirrors, wide.Headline = "distractor study Tables 2–4 (layout)", true
	wide.Chart = &tables.Chart{Keys: 3, Title: "rate per condition (one series per model, strategy and metric)"}
	ts = append(ts, wide)
	if len(opt.Human) > 0 {
		ms := Metrics() // squad_em and translit
		ts = append(ts, tables.HumanAgreement(rows, opt.Human, []study.Metric{
			{Name: "exact_match", Of: func(r *study.Row) bool { return r.Correct }, Applies: generated}, ms[2], ms[3],
			{Name: "semantic_judge", Of: func(r *study.Row) bool { return r.Correct || r.Verdict == SemanticCorrect }, Applies: generated}}))
	}
	return ts
}

// Score scores TriviaQA answers by exact match against every alias (and
// joins the semantic judge's verdict on switched answers), and each
// TruthfulQA item from its choices' log-likelihoods (MC1: strict and
// argmax); an item with a failed choice is failed.
func (p *plan) Score(recs []*study.Record) ([]study.Row, error) {
	c := study.NewCommon(p.e.Abstain)
	english := abstain.English(p.e.Abstain) // the paper's rule
	inForce := p.o.Scoring.abstainInForce().mark
	byID := p.Set.Index()
	var out []study.Row
	type mcKey struct{ model, item, cond string }
	mc := map[mcKey][]float64{}
	mcFail := map[mcKey]bool{}
	var mcOrder []mcKey
	semantic := map[string]string{}
	for _, r := range recs {
		if r.Fields.Role.Kind == study.RoleJudge && r.Status == study.StatusOK {
			v := study.VerdictUnparsed
			if r.Extracted != nil && r.Extracted.OK() {
				v = r.Extracted.Value
			}
			semantic[r.Key] = v
		}
	}
	for _, r := range recs {
		if r.Fields.Role.Kind == study.RoleJudge {
			continue
		}
		it := byID[r.Fields.Item]
		if it == nil {
			continue
		}
		v, _ := it.Variant("eng", study.English)
		if r.Fields.Role.Kind == study.RoleChoice {
			k := mcKey{r.Fields.Model, r.Fields.Item, r.Fields.Condition}
			if _, seen := mc[k]; !seen {
				mc[k] = make([]float64, len(it.Choices))
				mcOrder = append(mcOrder, k)
			}
			i := int(r.Fields.Role.Choice)
			if i >= len(it.Choices) {
				return nil, fmt.Errorf("record %s: choice %d of an item with %d", r.Key, i, len(it.Choices))
			}
			if r.Status != study.StatusOK {
				mcFail[k] = true
				continue
			}
			ctx, err := p.MCContext(v.Question, Condition(r.Fields.Condition))
			if err != nil {
				return nil, err
			}
			lp, err := score.ContinuationLogprob(r.Logprobs, len([]rune(ctx)))
			if err != nil {
				return nil, fmt.Errorf("record %s: %w", r.Key, err)
			}
			mc[k][i] = lp
			continue
		}
		row := c.Row(r)
		// Both abstention rules and the switch read the answer, as
		// Common.Row's rule does; Common.Row's is the multilingual one.
		ans := score.AnswerText(r)
		eng, _ := english.Abstains(ans)
		row.Marks.Set(MarkAbstainMultilingual, row.Abstain)
		row.Marks.Set(MarkAbstainEnglish, eng)
		row.Marks.Set(MarkAbstainRerun, RerunAbstains(ans))
		row.Marks.Set(MarkDistractorSwitch, script.DistractorSwitch(ans))
		row.Abstain = row.Marks.Has(inForce)
		golds := v.Golds()
		row.Gold = v.Answer
		if p.Judge != "" {
			row.Verdict = semantic[study.JudgeKey(r.Fields, p.Judge).String()]
		}
		if !row.Failed {
			ans := Answer(r.Response)
			row.Prediction = ans
			row.Correct = study.ExactMatch(ans, golds)
			row.Marks.Set(MarkSQuAD, study.ExactMatchSQuAD(ans, golds))
			row.Marks.Set(MarkLenient, row.Correct)
			row.Marks.Set(MarkTranslit, row.Correct || study.TranslitMatch(ans, golds))
		}
		out = append(out, row)
	}
	for _, k := range mcOrder {
		it := byID[k.item]
		row := study.Row{Key: study.Key{Experiment: p.e.Name, Model: k.model, Item: k.item, Language: "eng", Form: string(study.English), Strategy: StrategyMC1, Condition: k.cond},
			Gold: it.Choices[it.Correct], Failed: mcFail[k]}
		if !row.Failed {
			strict, argmax := score.MC1(mc[k], it.Correct)
			row.Correct = strict
			row.Marks.Set(MarkLenient, argmax)
			d := &study.Detail{ChoiceLogprobs: mc[k]}
			for i, lp := range mc[k] {
				if lp > mc[k][d.Chosen] {
					d.Chosen = i
				}
			}
			row.Detail, row.Prediction = d, it.Choices[d.Chosen]
		}
		out = append(out, row)
	}
	return out, nil
}

// Options are the distractor study's own options (top-level keys of the
// experiment file); the dataset and human_labels are shared fields of the
// experiment.
type Options struct {
	// Conditions are the distractor conditions run (default: all eight).
	Conditions []string `yaml:"conditions"`
	// Notes override the distractor notes by language (es, hi, zh).
	Notes map[string]string `yaml:"notes"`
	// Paragraph overrides the unrelated paragraph.
	Paragraph string `yaml:"paragraph"`
	// Scoring switches the scoring from the paper's rules (the defaults)
	// to Bhasha's named alternatives (YAML scoring:, a block other studies
	// declare with keys of their own).
	Scoring ScoringOptions `yaml:"scoring"`
}

// ScoringOptions are the distractor study's named alternatives to the
// paper's scoring rules. They change how recorded answers are read and
// tested, never what is asked.
type ScoringOptions struct {
	// MultilingualAbstain counts an abstention in any of the 17
	// languages' phrases (abstain.Phrases), instead of the default
	// English list (abstain.Phrases["eng"]: the paper's "I don't know"
	// and "unknown" and Bhasha's reading of its unpublished "related
	// phrases", 13 in all).
	MultilingualAbstain bool `yaml:"multilingual_abstain"`
	// RerunAbstain reads abstention as the independent rerun's scorer
	// does: exactly "i don't know" or "unknown" occurring in the answer
	// lower-cased (RerunAbstains; the experiment's abstain: phrases are
	// not added). It excludes MultilingualAbstain.
	RerunAbstain bool `yaml:"rerun_abstain"`
	// UnpairedTests adds the two-proportion z and Fisher's exact tests to
	// the paired condition tests (McNemar).
	UnpairedTests bool `yaml:"unpaired_tests"`
}

// Options is a new zero Options: the study's YAML keys.
func (Study) Options() any { return new(Options) }

// WithConditions sets the distractor conditions (YAML conditions:).
func WithConditions(names ...string) study.Option {
	return study.Set(func(o *Options) { o.Conditions = names })
}

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
// (published/distractors.csv).
func Published() ([]study.PublishedValue, error) {
	return study.ReadPublished(publishedFS, "published/*.csv")
}
