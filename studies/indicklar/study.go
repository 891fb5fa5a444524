// Package indicklar is the cross-lingual knowledge-consistency study
// (IndicKLAR, Mazumder et al. 2026; KLAR's languages too): one fact asked
// in English, the native script and code-mixed form under each prompting
// strategy (Strategy), built as the authors' scripts build them
// (Protocol) and scored by their rules, the transliteration-aware match
// beside.
package indicklar

import (
	"context"
	"embed"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/bhashalab/bhasha/study"

	"github.com/bhashalab/bhasha/analysis/bpe"
	"github.com/bhashalab/bhasha/analysis/extract"
	"github.com/bhashalab/bhasha/analysis/match"
	"github.com/bhashalab/bhasha/analysis/normalize"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/analysis/translit"
	"github.com/bhashalab/bhasha/datasets/lang"
	"github.com/bhashalab/bhasha/internal/memo"
	"github.com/bhashalab/bhasha/report/chart"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/studies/experiment"
)

// Study is the cross-lingual knowledge-consistency study (IndicKLAR, and
// KLAR's languages): YAML study: indicklar.
type Study struct{}

// Name is "indicklar".
func (Study) Name() string { return "indicklar" }

// About says what the study measures.
func (Study) About() string {
	return "cross-lingual knowledge consistency: one fact asked in English, the native script and code-mixed form under each prompting strategy (IndicKLAR)"
}

// Fields: the shared dataset and languages (its own options: Options).
func (Study) Fields() []string {
	return []string{"dataset", "languages"}
}

// Check requires languages and a dataset, parses languages, forms,
// strategies and the reference, and refuses decoding.max_tokens.
func (Study) Check(e *study.Experiment, c *study.Checker) {
	o := study.OptionsOf[Options](e)
	if len(e.Languages) == 0 {
		c.Add([]string{"languages"}, "languages is required for study %s", e.Study)
	}
	study.List(c, "languages", e.Languages, lang.New().Lookup)
	study.List(c, "forms", o.Forms, study.ParseForm)
	strategies := strategies(c, o)
	if e.Decoding.MaxTokens != 0 {
		var limits []string
		for _, s := range strategies {
			_, d := strategyOf(s, s.Stages(), false)
			limits = append(limits, fmt.Sprintf("%s %d", s, d.MaxTokens))
		}
		c.Add([]string{"decoding", "max_tokens"}, "decoding.max_tokens (%d) does not apply to study %s: each strategy fixes its own token limit, as the authors' code does (%s); prompt.max_tokens sets one limit for every strategy (the paper's §4.3 says 10)",
			e.Decoding.MaxTokens, e.Study, strings.Join(limits, ", "))
	}
	if o.Reference != "" {
		if ref, err := ParseStrategy(o.Reference); err != nil {
			c.Add([]string{"reference"}, "reference: %v", err)
		} else if !slices.Contains(strategies, ref) {
			c.Add([]string{"reference"}, "reference %s is not among the strategies run", ref)
		}
	}
	e.CheckDataset(c)
}

// Build reads the dataset and prepares the requests.
func (Study) Build(ctx context.Context, e *study.Experiment) (study.Plan, error) {
	o := study.OptionsOf[Options](e)
	set, err := e.LoadItemsWith(ctx, study.ItemOptions{ShuffleCandidates: o.Prompt.ShuffleCandidates})
	if err != nil {
		return nil, err
	}
	if o.Prompt.DemosFromEnglish && !slices.ContainsFunc(set.Items, func(it *study.Item) bool {
		v, ok := it.Variant("eng", study.English)
		return ok && v.Question != ""
	}) {
		return nil, fmt.Errorf("prompt.demos_from_english: dataset %s has no English questions to draw the demonstrations from", e.Dataset.Path)
	}
	c := &study.Checker{}
	p := &Protocol{Set: set, Seed: e.SeedOrDefault(), LenientJSON: o.Scoring.LenientJSON,
		Languages:     study.List(c, "languages", e.Languages, lang.New().Lookup),
		Forms:         study.List(c, "forms", o.Forms, study.ParseForm),
		Strategies:    strategies(c, o),
		PromptOptions: o.Prompt}
	if len(p.Forms) == 0 {
		p.Forms = []study.Form{study.Native}
	}
	var asked []study.LangForm
	for _, s := range p.Strategies {
		for _, sl := range p.slots(s) {
			asked = appendNew(asked, study.LangForm{Language: sl.lang.ISO3, Form: sl.form})
		}
	}
	gaps, err := e.CheckCoverage(set, asked, o.Forms)
	if err != nil {
		return nil, err
	}
	return &plan{Protocol: p, e: e, o: o, gaps: gaps}, nil
}

// Templates names the templates of the strategies asked
// (Protocol.Templates), from the options alone.
func (Study) Templates(e *study.Experiment) map[string]string {
	o := study.OptionsOf[Options](e)
	return (&Protocol{Strategies: strategies(&study.Checker{}, o), PromptOptions: o.Prompt}).Templates()
}

// strategies are the strategies o asks for (Baseline when none), those
// that do not parse left out and added to c.
func strategies(c *study.Checker, o *Options) []Strategy {
	if len(o.Strategies) == 0 {
		return []Strategy{Baseline}
	}
	return study.List(c, "strategies", o.Strategies, ParseStrategy)
}

// plan is a built IndicKLAR study.
type plan struct {
	*Protocol
	e    *study.Experiment
	o    *Options // the study's options
	gaps string   // the asked language/form pairs the dataset has no items for
}

func (p *plan) Items() *study.Items { return p.Set }

// Metrics are counted per model × language × form × strategy: the
// criterion in force, the transliteration-aware match and the answers
// outside the asked language's scripts.
func Metrics() []study.Metric {
	return []study.Metric{study.Correct(),
		{Name: "translit", Of: func(r *study.Row) bool { return r.Marks.Has(MarkTranslit) }},
		{Name: "switched", Of: func(r *study.Row) bool { return r.Switched }}}
}

// Claims are the paper's conclusions the conclusions table checks, per
// model, on the native questions against the reference ref: TinT-CM and
// TinT-EN each beat it with McNemar's exact p < 0.05 (§5.2, A.5); the
// best 2Step and 1Step variants beat it, by the largest accuracy gain,
// untested (§5.2); code-mixed questions beat native ones, paired by
// language and item, p beside (§5.1); English beats native questions,
// the rates' difference (§5.1). A strategy the run lacks gives no claim.
func (p *plan) Claims(ref string, rows []study.Row) []tables.Claim {
	ref = Reference(ref, rows)
	sel := func(s string, f study.Form) func(*study.Row) bool {
		return func(r *study.Row) bool { return r.Key.Strategy == s && r.Key.Form == string(f) }
	}
	native := func(s string) func(*study.Row) bool { return sel(s, study.Native) }
	key := func(r *study.Row) string { return r.Key.Language + "\x00" + r.Key.Item }
	var cs []tables.Claim
	for _, s := range []Strategy{TinTCM, TinTEN} {
		if slices.Contains(p.Strategies, s) && string(s) != ref {
			cs = append(cs, tables.PairedClaim(fmt.Sprintf("%s beats %s significantly (native; §5.2, A.5)", s, ref), "", native(string(s)), native(ref), key, "language and item", true))
		}
	}
	for _, fam := range []string{"2Step", "1Step"} {
		var vs []string
		for _, s := range p.Strategies {
			if s.Family() == fam && string(s) != ref {
				vs = append(vs, string(s))
			}
		}
		if len(vs) == 0 {
			continue
		}
		cs = append(cs, tables.Claim{Name: fmt.Sprintf("the best %s variant run beats %s (native; §5.2)", fam, ref),
			On: func(r *study.Row) bool {
				return native(ref)(r) || (r.Key.Form == string(study.Native) && slices.Contains(vs, r.Key.Strategy))
			},
			Eval: func(rows []*study.Row, v func(*study.Row) bool) tables.Outcome {
				best := math.NaN()
				for _, s := range vs {
					if d := tables.RateDiff(rows, v, native(s), native(ref)); !math.IsNaN(d) && (math.IsNaN(best) || d > best) {
						best = d
					}
				}
				return tables.Effect(best)
			}})
	}
	cs = append(cs, tables.PairedClaim(fmt.Sprintf("code-mixed beats native questions (%s; §5.1)", ref), "", sel(ref, study.CodeMixed), native(ref), key, "language and item", false))
	english := sel(ref, study.English)
	cs = append(cs, tables.Claim{Name: fmt.Sprintf("English beats native questions (%s; §5.1)", ref),
		On: func(r *study.Row) bool { return english(r) || native(ref)(r) }, Eval: func(rows []*study.Row, v func(*study.Row) bool) tables.Outcome {
			return tables.Effect(tables.RateDiff(rows, v, english, native(ref)))
		}})
	return cs
}

// Alternatives are the named options the sensitivity table re-scores with:
// the JSON rule not in force and the transliteration-aware match.
func (p *plan) Alternatives() []tables.Alternative {
	json := tables.Alternative{Name: "lenient_json", Option: "scoring.lenient_json",
		Rule: "lenient JSON extraction (fenced, embedded, single-quoted, truncated JSON) before the candidate matcher", Of: func(r *study.Row) bool { return r.Marks.Has(MarkLenientJSON) }}
	if p.LenientJSON {
		json = tables.Alternative{Name: "authors_json", Option: "scoring.lenient_json off",
			Rule: "the authors' json.loads rule: the whole output must be one JSON object, else the raw text is scored", Of: func(r *study.Row) bool { return r.Marks.Has(MarkAuthorsJSON) }}
	}
	return []tables.Alternative{json,
		{Name: "translit", Option: "(beside)", Rule: "correct, or the romanized answer matches the gold (translit.Match)", Of: func(r *study.Row) bool { return r.Marks.Has(MarkTranslit) }}}
}

// demonstrations says where the prompts' demonstrations came from and
// how they were drawn.
func (p *plan) demonstrations() string {
	shots := shotsOrDefault(p.Shots)
	var b strings.Builder
	if p.DemosFromEnglish {
		fmt.Fprintf(&b, "%d per item from the English split of its relation (prompt.demos_from_english, the paper's §4.3; the authors' code and Appendix F.1: the same relation and language; the ablations keep their own)", shots)
	} else {
		fmt.Fprintf(&b, "%d per item from the same relation and language, as the authors' code and Appendix F.1 (§4.3 says the English split: prompt.demos_from_english)", shots)
	}
	fmt.Fprintf(&b, "; drawn per item from a PCG stream seeded by seed %d and the item, language and form (the authors: one global random.sample stream, so not their sets)", p.e.SeedOrDefault())
	if p.DemosExcludeItem {
		b.WriteString("; the test item never among its own demonstrations (prompt.demos_exclude_item, Bhasha's fix; the authors' 2Step second stage can show the item with its gold)")
	} else {
		b.WriteString("; the test item left out, except in a 2Step second stage, which leaves out the pool element at the item's KLAR index as the authors' code does, so the item can be its own demonstration, gold included (prompt.demos_exclude_item leaves it out)")
	}
	return b.String()
}

// candidateOrder says how the candidates were ordered in the prompts.
func (p *plan) candidateOrder() string {
	if p.o.Prompt.ShuffleCandidates {
		return fmt.Sprintf("candidates shuffled with seed %d (prompt.shuffle_candidates; the authors' code keeps the stored order)", p.e.SeedOrDefault())
	}
	return "stored order, as the authors' code: the gold is always the last candidate shown, a position cue (prompt.shuffle_candidates shuffles them)"
}

// Notes lists the dataset's gaps among the asked pairs, the
// demonstrations when an option moved them or a 2Step strategy ran, and
// the candidate order when candidates were shown.
func (p *plan) Notes() []string {
	var out []string
	if p.gaps != "" {
		out = append(out, p.gaps)
	}
	if p.Stages() == 2 || p.DemosFromEnglish || p.DemosExcludeItem {
		out = append(out, "demonstrations: "+p.demonstrations())
	}
	if slices.ContainsFunc(p.Strategies, func(s Strategy) bool { return s != Baseline }) {
		out = append(out, "candidate order: "+p.candidateOrder())
	}
	return out
}

// Criteria documents the scoring criteria (scoring.csv), the candidate
// order and the demonstrations.
func (p *plan) Criteria() []study.Criterion {
	authors, def := strings.Join(normalize.Authors, "+"), strings.Join(normalize.Default, "+")
	return []study.Criterion{
		{Name: "correct", Rule: "baseline: prefix either way (is_nontrivial_prefix); other strategies: first stored candidate hit (==, prefix either way, substring) must be the gold, else prefix fallback; JSON answers read by the authors' json.loads rule (scoring.lenient_json: the lenient reader), unparsed JSON scored on the raw text", Normalization: authors},
		{Name: "translit", Rule: "correct, or the romanized prediction matches the gold within translit.Match's tolerance", Normalization: def + "+iso15919+loose"},
		{Name: "candidate_order", Rule: p.candidateOrder()},
		{Name: "demonstrations", Rule: p.demonstrations()},
	}
}

// Tables are TableGroups' tables, group by group.
func (p *plan) Tables(rows []study.Row, opt study.TableOptions) []*study.Table {
	var ts []*study.Table
	for _, g := range p.TableGroups(rows, opt) {
		ts = append(ts, g.Build(func(name string) *study.Table { return chart.ByName(ts)[name] })...)
	}
	return ts
}

// TableGroups are the standard tables, KLAR's, the sensitivity and
// conclusions tables, the dataset's statistics and the paper's wide
// layouts (experiment.TableGrouper).
func (p *plan) TableGroups(rows []study.Row, opt study.TableOptions) []experiment.TableGroup {
	r, _ := ParseStrategy(p.o.Reference) // "" when none (Check refused an unknown one)
	ref := string(r)
	var langs, forms []string
	for _, l := range p.Languages {
		langs = append(langs, l.ISO3)
	}
	for _, f := range p.Forms {
		forms = append(forms, string(f))
	}
	one := func(t func() *study.Table) func(func(string) *study.Table) []*study.Table {
		return func(func(string) *study.Table) []*study.Table { return []*study.Table{t()} }
	}
	return []experiment.TableGroup{
		{Names: []string{"accuracy", "scoring", "scaling", "model_families"}, Build: func(func(string) *study.Table) []*study.Table {
			ts := study.Standard(p.e.Study, Metrics(), p.Criteria(), rows, opt)
			for _, t := range ts {
				switch t.Name {
				case "accuracy":
					t.Mirrors = "IndicKLAR Tables 2, 7–9 (ACC)"
				case "scaling", "model_families":
					t.Mirrors = "IndicKLAR §5.3 / Fig. 5"
				}
			}
			return ts
		}},
		{Names: []string{"clc", "clc_mean", "clc_overall", "clc_matrix", "strategy_tests", "form_gaps", "form_gap_summary", "flip_points", "families", "family_tests",
			"family_gain_tests", "relations", "language_tests", "strategy_families", "family_selection", "tokenization", "latency"}, // KLAR's, in order
			Build: func(func(string) *study.Table) []*study.Table { return KLAR(rows, ref, FamilyOf) }},
		{Names: []string{"sensitivity"}, Build: one(func() *study.Table { return tables.Sensitivity(p.Alternatives(), rows) })},
		{Names: []string{"conclusions"}, Build: one(func() *study.Table {
			return tables.Conclusions(p.Claims(ref, rows), p.Alternatives(), rows)
		})},
		{Names: []string{"dataset_stats"}, Build: one(func() *study.Table { return DatasetStats(p.Set, langs, forms) })},
		{Names: []string{"acc_clc_wide", "tokenization_marks", "flip_points_wide"}, Build: layouts},
	}
}

// layouts are the paper's wide Tables 2, 8, 9, 10 and 15, from the long
// tables get builds.
func layouts(get func(name string) *study.Table) []*study.Table {
	fp := tables.Pivot("flip_points_wide", "flip points per model × language, each step's flipped answers and share", get("flip_points"),
		func(t *study.Table, r []any) bool { return t.Str(r, "path") == "strategy" }, []string{"model", "language"}, []string{"step"},
		[]string{"from", "flipped", "share"}, []string{string(TinTCM), string(TinTEN)})
	fp.Mirrors, fp.Headline = "IndicKLAR Table 15 (layout)", true
	return []*study.Table{AccCLCWide(get("accuracy"), get("clc_mean"), "native"), CorrelationMarks(get("tokenization")), fp}
}

// Score scores the answers by the criteria (Criteria), translations
// kept but not scored: a two-step answer's latency is every stage's, a
// second stage withheld because its first failed is a failed answer, and
// baseline prompts of models that name a tokenizer.json are counted
// offline (OfflineTokens).
func (p *plan) Score(recs []*study.Record) ([]study.Row, error) {
	sc, err := p.newScorer()
	if err != nil {
		return nil, err
	}
	var rows []study.Row
	var kept []experiment.Kept
	for _, r := range recs {
		var keep bool
		rows, keep, err = sc.Record(r, rows)
		if err != nil {
			return nil, err
		}
		if keep {
			kept = append(kept, experiment.KeptOf(r))
		}
	}
	return sc.Finish(rows, kept)
}

// Scorer streams Score (experiment.Streamer), keeping only the
// translations (first stages).
func (p *plan) Scorer() (experiment.RecordScorer, error) { return p.newScorer() }

// scorer is one scoring pass.
type scorer struct {
	p      *plan
	c      *study.Common
	toks   map[string]*bpe.Tokenizer
	keys   *memo.Memo[string, translit.Key] // prediction or gold → match.TranslitKey
	parsed *memo.Memo[parsing, study.ExtractResult]
	// prepared holds variant n's candidates prepared at 2n+1, its gold
	// alone (the prefix rule) at 2n, each made by the first verdict that needs it.
	prepared []atomic.Pointer[match.Candidates]
	norms    *memo.Memo[string, string] // prediction → normalize.Authors.String
}

func (p *plan) newScorer() (*scorer, error) {
	toks, err := p.tokenizers()
	if err != nil {
		return nil, err
	}
	p.index()
	n := len(p.variants)
	return &scorer{p: p, c: study.NewCommon(p.e.Abstain), toks: toks, keys: memo.New[string, translit.Key](1 << 18),
		parsed: memo.New[parsing, study.ExtractResult](1 << 18), prepared: make([]atomic.Pointer[match.Candidates], 2*n),
		norms: memo.New[string, string](1 << 20)}, nil
}

// Extracts: Record extracts each record itself (experiment.SelfExtracting).
func (s *scorer) Extracts() bool { return true }

// extract is Protocol.Extract of r under one JSON rule, memoized, without
// checking the candidates (no row reads Result.InCandidates).
func (s *scorer) extract(r *study.Record, st Strategy, lenient bool) study.ExtractResult {
	k := parsingOf(st, r, lenient)
	if len(k.response) > maxMemoText || k.field == "" {
		return parse(k)
	}
	return s.parsed.Get(k, parse)
}

// Record scores an answer on its own (its row appended to rows); a
// translation is kept for Finish.
func (s *scorer) Record(r *study.Record, rows []study.Row) ([]study.Row, bool, error) {
	p := s.p
	st, err := ParseStrategy(r.Fields.Strategy)
	if err != nil {
		return rows, false, nil
	}
	if r.Fields.Role.Kind == study.RoleTranslation {
		return rows, true, nil
	}
	if r.Fields.Role.Kind != study.RoleAnswer {
		return rows, false, nil
	}
	it, n, en := p.locate(r.Fields.Item, r.Fields.Language, r.Fields.Form)
	if n < 0 {
		return rows, false, nil
	}
	x := r.Extracted // what the answer is read from
	var res study.ExtractResult
	if r.Status == study.StatusOK {
		res = s.extract(r, st, p.LenientJSON)
		x = &res
	}
	row := s.c.RowExtracted(r, x)
	row.Domain = it.Relation
	from := n // the variant the gold and candidates are of
	if st == ContextEN && en >= 0 {
		from = en
	}
	gold, cands := p.variants[from].Answer, p.variants[from].StoredCandidates
	row.Gold = gold
	if t := s.toks[r.Fields.Model]; t != nil && (st == Baseline || st == BaselineCands) && len(r.Request) > 0 {
		n, err := countPrompt(t, r.Request)
		if err != nil {
			return rows, false, fmt.Errorf("counting tokens of %s: %w", r.Key, err)
		}
		row.OfflineTokens = n
	}
	if row.Failed {
		return append(rows, row), false, nil
	}
	pred := scored(x)
	row.Prediction = pred
	row.Correct = s.verdict(st, pred, from, gold, cands)
	other := row.Correct // the verdict under the JSON rule not in force
	if st.JSON() && !extract.RulesAgree(r.Response, "answer") {
		o := s.extract(r, st, !p.LenientJSON)
		other = s.verdict(st, scored(&o), from, gold, cands)
	}
	authors, lenient := row.Correct, other
	if p.LenientJSON {
		authors, lenient = other, row.Correct
	}
	row.Marks.Set(MarkAuthorsJSON, authors)
	row.Marks.Set(MarkLenientJSON, lenient)
	row.Marks.Set(MarkTranslit, row.Correct || s.translitOf(pred, gold))
	return append(rows, row), false, nil
}

// maxMemoText is the longest text a scoring pass remembers results for.
const maxMemoText = 256

// verdict is whether pred matches gold (and cands) of item variant n
// under strategy st's rule, through the pass's memos.
func (s *scorer) verdict(st Strategy, pred string, n int32, gold string, cands []string) bool {
	at := 2 * int(n)
	if st != Baseline && len(cands) > 0 {
		at++
	} else {
		cands = nil // the prefix rule: Match with no candidates is Prefix
	}
	c := s.prepared[at].Load()
	if c == nil {
		c = match.PrepareCandidates(cands, gold, normalize.Authors)
		if !s.prepared[at].CompareAndSwap(nil, c) {
			c = s.prepared[at].Load()
		}
	}
	_, ok := c.Match(remember(s.norms, pred, normalize.Authors.String))
	return ok
}

// remember is m.Get(text, f), or f(text) for a text longer than
// maxMemoText, which the pass does not remember.
func remember[V any](m *memo.Memo[string, V], text string, f func(string) V) V {
	if len(text) > maxMemoText {
		return f(text)
	}
	return m.Get(text, f)
}

// translitOf is match.Translit of pred against gold, through the pass's memo.
func (s *scorer) translitOf(pred, gold string) bool {
	return remember(s.keys, pred, match.TranslitKey).Matches(s.keys.Get(gold, match.TranslitKey))
}

// Finish adds each two-step answer's first-stage time and cache, and a
// failed, withheld row for each second stage never sent because its first
// stage failed.
func (s *scorer) Finish(rows []study.Row, kept []experiment.Kept) ([]study.Row, error) {
	p := s.p
	s.keys, s.parsed, s.prepared, s.norms = nil, nil, nil, nil // every record is scored: free what they remember
	joinStages(rows, kept)
	var answered map[study.Key]bool // the answers' keys, made at the first failed first stage
	for i := range kept {
		if kept[i].OK {
			continue
		}
		if answered == nil {
			answered = make(map[study.Key]bool, len(rows))
			for j := range rows {
				answered[rows[j].Key] = true
			}
		}
		k := answerKey(kept[i].Fields)
		if answered[k] {
			continue
		}
		it := p.item(k.Item)
		if it == nil {
			continue
		}
		v, ok := it.Variant(k.Language, study.Form(k.Form))
		if !ok {
			continue
		}
		rows = append(rows, study.Row{Key: k, Domain: it.Relation, Gold: v.Answer, Failed: true, Withheld: true})
	}
	return rows, nil
}

// firstStages indexes the kept first stages by their answer's key; a
// later stage of a key replaces an earlier one.
func firstStages(kept []experiment.Kept) map[study.Key]int32 {
	at := make(map[study.Key]int32, len(kept))
	for i := range kept {
		at[answerKey(kept[i].Fields)] = int32(i)
	}
	return at
}

// joinStages adds to each row its first stage's latency and cache.
func joinStages(rows []study.Row, kept []experiment.Kept) {
	at := firstStages(kept)
	strategies := map[string]bool{}
	for i := range kept {
		strategies[kept[i].Fields.Strategy] = true
	}
	last, has := "", false // rows come by strategy: one map read per run of them
	for i := range rows {
		row := &rows[i]
		if st := row.Key.Strategy; st != last || i == 0 {
			last, has = st, strategies[st]
		}
		if !has {
			continue
		}
		if j, ok := at[row.Key]; ok {
			row.LatencyMS += kept[j].LatencyMS
			row.Cached = row.Cached || kept[j].Cached
		}
	}
}

// answerKey is a first stage's key with the answer's role.
func answerKey(k study.Key) study.Key {
	k.Role = study.Role{}
	return k
}

// ReadsRequests reports whether a model names a tokenizer (its prompts
// are counted offline from the request bodies).
func (p *plan) ReadsRequests() bool {
	return slices.ContainsFunc(p.e.Models, func(m experiment.Model) bool { return m.Tokenizer != "" })
}

// scored is the text an extraction is scored on: the value, or the raw
// output trimmed when it could not be read (as the authors do).
func scored(x *study.ExtractResult) string {
	switch {
	case x == nil:
		return ""
	case !x.OK():
		return x.Fallback
	}
	return x.Value
}

// tokenizers loads the tokenizer.json of every model that names one.
func (p *plan) tokenizers() (map[string]*bpe.Tokenizer, error) {
	toks := map[string]*bpe.Tokenizer{}
	for _, m := range p.e.Models {
		if path := p.e.TokenizerPath(m); path != "" {
			t, err := bpe.Load(path)
			if err != nil {
				return nil, err
			}
			toks[m.Name] = t
		}
	}
	return toks, nil
}

// countPrompt counts a request body's prompt offline: a raw completion
// prompt as sent; a chat prompt as its messages' texts concatenated,
// without a chat template.
func countPrompt(t *bpe.Tokenizer, body []byte) (int, error) {
	prompt, msgs, err := engine.PromptOf(body)
	if err != nil {
		return 0, err
	}
	for _, m := range msgs {
		prompt += m.Content
	}
	return t.Count(prompt)
}

// publishedFS holds the numbers transcribed from the paper.
//
//go:embed published/*.csv
var publishedFS embed.FS

// Published reads the numbers transcribed from the paper, for the
// report's versus_paper table (experiment.Publisher).
func (p *plan) Published() ([]study.PublishedValue, error) { return Published() }

// Published reads the numbers transcribed from the paper
// (published/indicklar.csv).
func Published() ([]study.PublishedValue, error) {
	return study.ReadPublished(publishedFS, "published/*.csv")
}
