package distractors

import (
	"math"
	"strings"

	"github.com/bhashalab/bhasha/study"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// Decomposition splits each condition's hallucination proxy into script
// and real error (the distractor study's §5.3), per model × condition over
// the TriviaQA answers (a failed request counts as a wrong answer): by the
// paper's rule in the headline columns (a switched answer to an item right
// on the clean prompt that the semantic judge calls CORRECT is recovered:
// the paper's 120 of 148), and by Bhasha's broader rule beside (broad_*:
// every switched answer counted in halluc that the judge calls CORRECT is
// recovered, and those it calls ABSTAIN are abstentions). Each column's
// description says how it is computed; rates carry 95% Wilson intervals
// (_lo, _hi).
func Decomposition(rows []study.Row) *study.Table {
	t := study.NewTable("script_decomposition", "the error rise split into right-but-wrong-script answers and real errors (semantic judge)",
		study.KeyColumn("model"),
		key("condition"),
		study.KeyColumn("n"),
		study.CountColumn("em", "answers exact-match correct"),
		study.CountColumn("abstain", "answers that abstain (not correct)"),
		study.CountColumn("halluc", "hallucination proxy: n − em − abstain"),
		study.ProportionColumn("halluc_rate", "halluc / n"),
		study.LowerColumn("halluc_lo", "lower bound of the 95% interval of halluc"),
		study.UpperColumn("halluc_hi", "upper bound of the 95% interval of halluc"),
		study.CountColumn("switched", "answers with a Devanagari or CJK character"),
		study.ProportionColumn("switch_rate", "switched / n"),
		study.CountColumn("sw_clean_correct", "switched answers whose clean answer was: correct"),
		study.CountColumn("sw_clean_abstain", "switched answers whose clean answer was: abstain"),
		study.CountColumn("sw_clean_wrong", "switched answers whose clean answer was: wrong"),
		study.CountColumn("sw_clean_none", "switched answers whose clean answer was: none"),
		study.CountColumn("judged_correct", "switched answers the semantic judge called correct"),
		study.CountColumn("judged_wrong", "switched answers the semantic judge called wrong"),
		study.CountColumn("judged_abstain", "switched answers the semantic judge called abstain"),
		study.CountColumn("judged_unparsed", "switched answers the semantic judge called unparsed"),
		study.CountColumn("recovered_of_clean_correct", "switched answers to items right on the clean prompt that the judge calls CORRECT, in any bucket (the paper's 120 of 148)"),
		study.ProportionColumn("recovery_rate", "recovered_of_clean_correct / sw_clean_correct (the paper's 81.1% = 120 / 148)"),
		study.LowerColumn("recovery_lo", "95% Wilson interval of recovery_rate"),
		study.UpperColumn("recovery_hi", "95% Wilson interval of recovery_rate"),
		study.CountColumn("recovered_in_halluc", "of recovered_of_clean_correct, those counted in halluc (neither exact-match correct nor abstaining): what adj_halluc removes"),
		study.ProportionColumn("recovery_rate_in_halluc", "recovered_in_halluc / sw_clean_correct (only the recovered answers counted in halluc)"),
		study.LowerColumn("recovery_in_halluc_lo", "95% Wilson interval of recovery_rate_in_halluc"),
		study.UpperColumn("recovery_in_halluc_hi", "95% Wilson interval of recovery_rate_in_halluc"),
		study.ProportionColumn("adj_halluc", "(halluc − recovered_in_halluc) / n (the paper's rule)"),
		study.LowerColumn("adj_halluc_lo", "lower bound of the 95% interval of adj_halluc"),
		study.UpperColumn("adj_halluc_hi", "upper bound of the 95% interval of adj_halluc"),
		study.ProportionColumn("adj_accuracy", "(em + recovered_in_halluc) / n (the paper's rule)"),
		study.LowerColumn("adj_accuracy_lo", "lower bound of the 95% interval of adj_accuracy"),
		study.UpperColumn("adj_accuracy_hi", "upper bound of the 95% interval of adj_accuracy"),
		study.StatisticColumn("inflation", "halluc / (halluc − recovered_in_halluc)"),
		study.StatisticColumn("rise", "raw (rise) and the paper's adjusted (real_rise) hallucination rate minus the clean one"),
		study.StatisticColumn("real_rise", "raw (rise) and the paper's adjusted (real_rise) hallucination rate minus the clean one"),
		study.ProportionColumn("script_share", "(rise − real_rise) / rise: the share of the rise due to script (the paper's rule)"),
		study.CountColumn("broad_recovered", "switched answers counted in halluc that the judge calls CORRECT, whatever the clean outcome"),
		study.CountColumn("broad_script_abstain", "switched answers counted in halluc that the judge calls ABSTAIN (abstentions the phrases missed)"),
		study.ProportionColumn("broad_adj_halluc", "(halluc − broad_recovered − broad_script_abstain) / n (Bhasha's broader rule)"),
		study.LowerColumn("broad_adj_halluc_lo", "lower bound of the 95% interval of broad_adj_halluc"),
		study.UpperColumn("broad_adj_halluc_hi", "upper bound of the 95% interval of broad_adj_halluc"),
		study.ProportionColumn("broad_adj_accuracy", "(em + broad_recovered) / n"),
		study.StatisticColumn("broad_inflation", "halluc / (halluc − broad_recovered − broad_script_abstain)"),
		study.StatisticColumn("broad_real_rise", "broad_adj_halluc minus the clean one (same rule)"),
		study.ProportionColumn("broad_script_share", "(rise − broad_real_rise) / rise"))
	t.Mirrors = "distractor study §5.3 (with Table 3's rates)"
	by := map[condCell][]study.Row{}
	clean := map[[2]string]study.Row{} // by model and item
	for _, r := range rows {
		if r.Key.Strategy != StrategyQA {
			continue
		}
		c := condCell{r.Key.Model, r.Key.Condition} // a failed answer is in halluc, as the TriviaQA scorer counts a missing one
		by[c] = append(by[c], r)
		if r.Key.Condition == cleanCondition {
			clean[[2]string{r.Key.Model, r.Key.Item}] = r
		}
	}
	cells := study.SortedKeysBy(by, func(c condCell) []string { return []string{c.model, c.cond} })
	type tally struct {
		n, em, abst, hall, sw, rec, recCC, jcCC, swCC, swCA, swCW, swCN, jc, jw, ja, ju, sabst int
	}
	count := func(rs []study.Row, model string) tally {
		var x tally
		for _, r := range rs {
			x.n++
			switch {
			case r.Correct:
				x.em++
			case r.Abstain:
				x.abst++
			default:
				x.hall++
			}
			if !r.Marks.Has(MarkDistractorSwitch) {
				continue
			}
			x.sw++
			o, ok := clean[[2]string{model, r.Key.Item}]
			switch {
			case !ok:
				x.swCN++
			case o.Correct:
				x.swCC++
			case o.Abstain:
				x.swCA++
			default:
				x.swCW++
			}
			inHall := !r.Correct && !r.Abstain
			switch r.Verdict {
			case SemanticCorrect:
				x.jc++
				if ok && o.Correct {
					x.jcCC++
					if inHall {
						x.recCC++
					}
				}
				if inHall {
					x.rec++
				}
			case SemanticWrong:
				x.jw++
			case SemanticAbstain:
				x.ja++
				if inHall {
					x.sabst++
				}
			case "":
			default:
				x.ju++
			}
		}
		return x
	}
	rate := tables.Frac
	// shareOf is the part of the rise that the adjustment removes.
	shareOf := func(rise, realRise float64) float64 {
		if rise == 0 {
			return math.NaN()
		}
		return (rise - realRise) / rise
	}
	for _, c := range cells {
		x := count(by[c], c.model)
		base := count(by[condCell{c.model, cleanCondition}], c.model)
		hall := study.NewProportion(x.hall, x.n)
		rise := hall.P - rate(base.hall, base.n)
		recov, recovHall := study.NewProportion(x.jcCC, x.swCC), study.NewProportion(x.recCC, x.swCC)
		// The paper's rule.
		adjHall := study.NewProportion(x.hall-x.recCC, x.n)
		adjAcc := study.NewProportion(x.em+x.recCC, x.n)
		realRise := adjHall.P - rate(base.hall-base.recCC, base.n)
		// The broader rule.
		bHall := study.NewProportion(x.hall-x.rec-x.sabst, x.n)
		bRealRise := bHall.P - rate(base.hall-base.rec-base.sabst, base.n)
		t.Add(c.model, c.cond, x.n, x.em, x.abst, x.hall, hall.P, hall.Lo, hall.Hi,
			x.sw, rate(x.sw, x.n), x.swCC, x.swCA, x.swCW, x.swCN,
			x.jc, x.jw, x.ja, x.ju,
			x.jcCC, recov.P, recov.Lo, recov.Hi, x.recCC, recovHall.P, recovHall.Lo, recovHall.Hi,
			adjHall.P, adjHall.Lo, adjHall.Hi, adjAcc.P, adjAcc.Lo, adjAcc.Hi, rate(x.hall, x.hall-x.recCC), rise, realRise, shareOf(rise, realRise),
			x.rec, x.sabst, bHall.P, bHall.Lo, bHall.Hi, rate(x.em+x.rec, x.n),
			rate(x.hall, x.hall-x.rec-x.sabst), bRealRise, shareOf(rise, bRealRise))
	}
	if len(t.Rows) == 0 {
		strategies := map[string]bool{}
		for _, r := range rows {
			strategies[r.Key.Strategy] = true
		}
		t.Note = "no decomposition: it splits the hallucination proxy of free-form TriviaQA answers (strategy qa), and this run has none"
		if len(strategies) > 0 {
			t.Note += " (its strategies: " + strings.Join(study.SortedKeys(strategies), ", ") + ")"
		}
	}
	return t
}
