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
	"fmt"
	"strings"

	"github.com/bhashalab/bhasha/analysis/abstain"
	"github.com/bhashalab/bhasha/analysis/match"
	"github.com/bhashalab/bhasha/analysis/normalize"
	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/script"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/studies/experiment"
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
func (Study) Check(e *experiment.Experiment, c *experiment.Checker) {
	o := experiment.OptionsOf[Options](e)
	experiment.List(c, "conditions", o.Conditions, ParseCondition)
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
func (Study) Build(ctx context.Context, e *experiment.Experiment) (experiment.Plan, error) {
	set, err := e.LoadItems(ctx)
	if err != nil {
		return nil, err
	}
	o := experiment.OptionsOf[Options](e)
	conds := experiment.List(&experiment.Checker{}, "conditions", o.Conditions, ParseCondition)
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
	e *experiment.Experiment
	o *Options // the study's options
}

func (p *plan) Items() *item.Set { return p.Set }

// generated limits a metric to generated answers (mc1 choices have no text).
func generated(strategy string) bool { return strategy != StrategyMC1 }

// Metrics: exact match (correct), MC1's argmax beside it (lenient), SQuAD
// exact match, the transliteration-aware match, abstention, the paper's
// hallucination proxy and the script switch.
func Metrics() []tables.Metric {
	return []tables.Metric{tables.Correct(),
		{Name: "lenient", Of: func(r score.Row) bool { return r.Marks.Has(MarkLenient) }},
		{Name: "squad_em", Of: func(r score.Row) bool { return r.Marks.Has(MarkSQuAD) }, Applies: generated},
		{Name: "translit", Of: func(r score.Row) bool { return r.Marks.Has(MarkTranslit) }, Applies: generated},
		{Name: "abstain", Of: func(r score.Row) bool { return !r.Correct && r.Abstain }, Applies: generated},
		{Name: "hallucination", Of: func(r score.Row) bool { return !r.Correct && !r.Abstain }, Applies: generated},
		{Name: "distractor_switch", Of: func(r score.Row) bool { return r.Marks.Has(MarkDistractorSwitch) }, Applies: generated}}
}

// The abstention rules: the default English list, the 17 languages'
// (scoring.multilingual_abstain) and the rerun's two phrases
// (scoring.rerun_abstain).
const (
	abstainEnglish      = "english"
	abstainMultilingual = "multilingual"
	abstainRerun        = "rerun"
)

// abstainRule is one abstention rule: its name as an alternative, the
// option that puts it in force, what it decides, and its mark.
type abstainRule struct {
	rule, name, option, doc string
	mark                    int
}

// abstainRules are the three rules, the default first.
func abstainRules() []abstainRule {
	return []abstainRule{
		{abstainEnglish, "english_abstain", "scoring.multilingual_abstain and scoring.rerun_abstain off", "an English abstention phrase occurs after normalize.Default (abstain.Phrases[\"eng\"], 13: the paper's \"I don't know\", \"unknown\" and Bhasha's reading of its unpublished \"related phrases\") + experiment abstain:", MarkAbstainEnglish},
		{abstainMultilingual, "multilingual_abstain", "scoring.multilingual_abstain", "an abstention phrase of any of 17 languages occurs after normalize.Default (abstain.Phrases) + experiment abstain:", MarkAbstainMultilingual},
		{abstainRerun, "rerun_abstain", "scoring.rerun_abstain", "exactly \"i don't know\" or \"unknown\" occurs in the answer lower-cased (the rerun's scorer; no experiment abstain:)", MarkAbstainRerun},
	}
}

// abstainInForce names the abstention rule in force.
func (s ScoringOptions) abstainInForce() string {
	switch {
	case s.MultilingualAbstain:
		return abstainMultilingual
	case s.RerunAbstain:
		return abstainRerun
	}
	return abstainEnglish
}

// abstainRule says which abstention rule is in force.
func (p *plan) abstainRule() string {
	for _, r := range abstainRules() {
		if r.rule == p.o.Scoring.abstainInForce() {
			return "not correct and " + r.doc + " (" + r.option + "; the others are in the sensitivity table)"
		}
	}
	return ""
}

// RerunAbstainPhrases are the independent rerun's abstention phrases,
// exactly (002_…txt: abstain if "i don't know" / "unknown" appears).
func RerunAbstainPhrases() []string { return []string{"i don't know", "unknown"} }

// RerunAbstains is the rerun's abstention rule: a phrase of
// RerunAbstainPhrases occurs in answer lower-cased (strings.ToLower; no
// other normalisation, so "I don’t know" with a curly apostrophe does
// not abstain).
func RerunAbstains(answer string) bool {
	a := strings.ToLower(answer)
	for _, p := range RerunAbstainPhrases() {
		if strings.Contains(a, p) {
			return true
		}
	}
	return false
}

// Criteria documents the criteria (scoring.csv).
func (p *plan) Criteria() []tables.Criterion {
	cs := Criteria()
	for i := range cs {
		if cs[i].Name == "abstain" {
			cs[i].Rule = p.abstainRule()
			if p.o.Scoring.abstainInForce() == abstainRerun {
				cs[i].Normalization = "lower-case"
			}
		}
	}
	return cs
}

// Alternatives are the named options the sensitivity table re-scores with:
// each abstention rule not in force (abstention and hallucination move
// together) and the transliteration-aware match.
func (p *plan) Alternatives() []tables.Alternative {
	var out []tables.Alternative
	for _, a := range abstainRules() {
		if a.rule == p.o.Scoring.abstainInForce() {
			continue
		}
		other := func(r score.Row) bool { return r.Marks.Has(a.mark) }
		out = append(out,
			tables.Alternative{Name: a.name, Option: a.option, Rule: "abstention: " + a.doc, Measure: "abstain", Applies: generated,
				Base: func(r score.Row) bool { return !r.Correct && r.Abstain }, Of: func(r score.Row) bool { return !r.Correct && other(r) }},
			tables.Alternative{Name: a.name, Option: a.option, Rule: "hallucination proxy with abstention: " + a.doc, Measure: "hallucination", Applies: generated,
				Base: func(r score.Row) bool { return !r.Correct && !r.Abstain }, Of: func(r score.Row) bool { return !r.Correct && !other(r) }})
	}
	return append(out, tables.Alternative{Name: "translit", Option: "(beside)", Rule: "correct, or the answer matches an alias within translit.Match's tolerance", Applies: generated,
		Of: func(r score.Row) bool { return r.Marks.Has(MarkTranslit) }})
}

// Claims are the paper's conclusions the conclusions table checks under
// each alternative: the Hindi note raises the hallucination proxy and the
// abstention rate moves with the phrase list (§5), and it lowers exact
// match (Table 2).
func Claims() []tables.Claim {
	cond := func(c Condition) func(score.Row) bool {
		return func(r score.Row) bool { return r.Key.Strategy == StrategyQA && r.Key.Condition == string(c) }
	}
	both := func(r score.Row) bool { return cond(Hindi)(r) || cond(Clean)(r) }
	return []tables.Claim{
		{Name: "the Hindi note raises the hallucination proxy", On: both, Measure: "hallucination", Effect: func(rows []score.Row, v func(score.Row) bool) float64 {
			return tables.RateDiff(rows, v, cond(Hindi), cond(Clean))
		}},
		{Name: "the Hindi note raises abstention", Measure: "abstain", On: both, Effect: func(rows []score.Row, v func(score.Row) bool) float64 {
			return tables.RateDiff(rows, v, cond(Hindi), cond(Clean))
		}},
		{Name: "the Hindi note lowers exact match", On: both, Effect: func(rows []score.Row, v func(score.Row) bool) float64 {
			return tables.RateDiff(rows, v, cond(Clean), cond(Hindi))
		}},
	}
}

// Criteria documents the scoring criteria.
func Criteria() []tables.Criterion {
	def := strings.Join(normalize.Default, "+")
	return []tables.Criterion{
		{Name: "correct", Rule: "TriviaQA exact match of the whole response, trimmed (extraction method text), against value, aliases and normalized aliases (official normalize_answer); mc1: correct choice strictly above every other (TruthfulQA MC_calcs)", Normalization: "triviaqa-normalize"},
		{Name: "lenient", Rule: "mc1: argmax with ties to the first (lm-evaluation-harness)"},
		{Name: "squad_em", Rule: "exact match after SQuAD v1.1's normalize_answer (punctuation deleted)", Normalization: "squad-normalize"},
		{Name: "abstain", Rule: "not correct and an English abstention phrase occurs (abstain.Phrases[\"eng\"] + experiment abstain:; scoring.multilingual_abstain: 17 languages; scoring.rerun_abstain: the rerun's two phrases)", Normalization: def},
		{Name: "hallucination", Rule: "neither correct nor abstaining (the paper's proxy)"},
		{Name: "distractor_switch", Rule: "the answer has a character of the Devanagari block (U+0900-U+097F) or the CJK Unified Ideographs block (U+4E00-U+9FFF); the same rule picks the answers the semantic judge reads"},
		{Name: "translit", Rule: "correct, or the prediction matches an alias within translit.Match's tolerance", Normalization: def + "+iso15919+loose"},
	}
}

// Tables: accuracy, scoring (scaling with model sizes), each condition
// against clean, the script decomposition and the verdicts by script.
func (p *plan) Tables(rows []score.Row, opt tables.Options) []*tables.Table {
	ts := append(tables.Standard(p.e.Study, Metrics(), p.Criteria(), rows, opt),
		ConditionTests(Metrics(), rows, p.o.Scoring.UnpairedTests), Decomposition(rows), tables.JudgeByScript(rows), tables.Sensitivity(p.Alternatives(), rows),
		tables.Conclusions(Claims(), p.Alternatives(), rows))
	acc := ts[0]
	acc.Mirrors = "distractor study Tables 2–3"
	order := make([]string, len(Conditions))
	for i, c := range Conditions {
		order[i] = string(c)
	}
	wide := tables.Pivot("conditions_wide", "accuracy, abstention, hallucination proxy and script switch per model, conditions as columns", acc,
		func(t *tables.Table, r []any) bool {
			m := t.Str(r, "metric")
			return t.Str(r, "strategy") != StrategyMC1 && (m == "correct" || m == "abstain" || m == "hallucination" || m == "distractor_switch")
		}, []string{"model", "strategy", "metric"}, []string{"condition"}, []string{"rate"}, order)
	wide.Mirrors, wide.Headline = "distractor study Tables 2–4 (layout)", true
	wide.Chart = &tables.Chart{Keys: 3, Title: "rate per condition (one series per model, strategy and metric)"}
	ts = append(ts, wide)
	if len(opt.Human) > 0 {
		ts = append(ts, tables.HumanAgreement(rows, opt.Human, []tables.Metric{
			{Name: "exact_match", Of: func(r score.Row) bool { return r.Correct }, Applies: generated},
			{Name: "squad_em", Of: func(r score.Row) bool { return r.Marks.Has(MarkSQuAD) }, Applies: generated},
			{Name: "translit", Of: func(r score.Row) bool { return r.Marks.Has(MarkTranslit) }, Applies: generated},
			{Name: "semantic_judge", Of: func(r score.Row) bool { return r.Correct || r.Verdict == SemanticCorrect }, Applies: generated}}))
	}
	return ts
}

// Score scores TriviaQA answers by exact match against every alias (and
// joins the semantic judge's verdict on switched answers), and each
// TruthfulQA item from its choices' log-likelihoods (MC1: strict and
// argmax); an item with a failed choice is failed.
func (p *plan) Score(recs []*engine.Record) ([]score.Row, error) {
	c := score.NewCommon(p.e.Abstain)
	english := abstain.English(p.e.Abstain) // the paper's rule
	byID := p.Set.Index()
	var out []score.Row
	type mcKey struct{ model, item, cond string }
	mc := map[mcKey][]float64{}
	mcFail := map[mcKey]bool{}
	var mcOrder []mcKey
	semantic := map[string]string{}
	for _, r := range recs {
		if r.Fields.Role.Kind == engine.RoleJudge && r.Status == engine.StatusOK {
			v := score.VerdictUnparsed
			if r.Extracted != nil && r.Extracted.OK() {
				v = r.Extracted.Value
			}
			semantic[r.Key] = v
		}
	}
	for _, r := range recs {
		if r.Fields.Role.Kind == engine.RoleJudge {
			continue
		}
		it := byID[r.Fields.Item]
		if it == nil {
			continue
		}
		v, _ := it.Variant("eng", item.English)
		if r.Fields.Role.Kind == engine.RoleChoice {
			k := mcKey{r.Fields.Model, r.Fields.Item, r.Fields.Condition}
			if _, seen := mc[k]; !seen {
				mc[k] = make([]float64, len(it.Choices))
				mcOrder = append(mcOrder, k)
			}
			i := int(r.Fields.Role.Choice)
			if i >= len(it.Choices) {
				return nil, fmt.Errorf("record %s: choice %d of an item with %d", r.Key, i, len(it.Choices))
			}
			if r.Status != engine.StatusOK {
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
		multi := row.Abstain
		eng, _ := english.Abstains(ans)
		row.Marks.Set(MarkAbstainMultilingual, multi)
		row.Marks.Set(MarkAbstainEnglish, eng)
		rerun := RerunAbstains(ans)
		row.Marks.Set(MarkAbstainRerun, rerun)
		row.Marks.Set(MarkDistractorSwitch, script.DistractorSwitch(ans))
		switch p.o.Scoring.abstainInForce() {
		case abstainEnglish:
			row.Abstain = eng
		case abstainRerun:
			row.Abstain = rerun
		}
		golds := v.Golds()
		row.Gold = v.Answer
		if p.Judge != "" {
			row.Verdict = semantic[SemanticJudgeKey(r.Fields, p.Judge).String()]
		}
		if !row.Failed {
			ans := Answer(r.Response)
			row.Prediction = ans
			row.Correct = match.ExactMatch(ans, golds)
			row.Marks.Set(MarkSQuAD, match.ExactMatchSQuAD(ans, golds))
			row.Marks.Set(MarkLenient, row.Correct)
			row.Marks.Set(MarkTranslit, row.Correct || match.Translit(ans, golds))
		}
		out = append(out, row)
	}
	for _, k := range mcOrder {
		it := byID[k.item]
		row := score.Row{Key: engine.Key{Experiment: p.e.Name, Model: k.model, Item: k.item, Language: "eng", Form: string(item.English), Strategy: StrategyMC1, Condition: k.cond},
			Gold: it.Choices[it.Correct], Failed: mcFail[k]}
		if !row.Failed {
			strict, argmax := score.MC1(mc[k], it.Correct)
			row.Correct = strict
			row.Marks.Set(MarkLenient, argmax)
			d := &score.Detail{ChoiceLogprobs: mc[k]}
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
