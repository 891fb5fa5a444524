package indicklar

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/bhashalab/bhasha/study"

	"github.com/bhashalab/bhasha/report/chart"
)

// FormAccuracy is IndicKLAR's Fig. 2: per model, the baseline's accuracy
// on English, native and code-mixed questions per language (bars with
// 95% Wilson whiskers), from the accuracy table (metric correct).
func FormAccuracy(acc *study.Table) ([]study.Figure, error) {
	est := estimatesOf(acc)
	var keys [][2]string // model, strategy
	for k := range est {
		if k[1] == string(Baseline) || k[1] == string(BaselineCands) {
			keys = appendNew(keys, [2]string{k[0], k[1]})
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+keys[i][1] < keys[j][0]+keys[j][1] })
	forms := []string{string(study.English), string(study.Native), string(study.CodeMixed)}
	var out []study.Figure
	for _, k := range keys {
		var langs, names []string
		n := 0
		for _, f := range forms {
			for l, e := range est[[3]string{k[0], k[1], f}] {
				n += e.N
				if f != string(study.English) {
					langs = appendNew(langs, l)
				}
			}
		}
		sort.Strings(langs)
		var values [][]study.Estimate
		for _, f := range forms {
			m, ok := est[[3]string{k[0], k[1], f}]
			if !ok {
				continue
			}
			row := make([]study.Estimate, len(langs))
			for i, l := range langs {
				if f == string(study.English) { // one English score, the same for every language
					l = "eng"
				}
				row[i] = chart.Lookup(m, l)
			}
			names, values = append(names, f), append(values, row)
		}
		o, err := study.IntervalBars(fmt.Sprintf("%s — %s accuracy by form", k[0], k[1]), "accuracy", langs, names, values)
		if err != nil {
			return nil, err
		}
		out = append(out, figureOf(acc, "form_accuracy_"+k[0]+"_"+k[1], "IndicKLAR Fig. 2",
			fmt.Sprintf("%s, %s: accuracy on %s questions per language, whiskers the 95%% Wilson interval", k[0], k[1], formList(names)), "n = "+study.Counted(n, "answer"), o))
	}
	return out, nil
}

// Romanization is IndicKLAR's Fig. 7 per model, from accuracy: per
// language, accuracy on the native questions as they are, fully
// romanized (ablation-romanized), code-mixed and romanized by the model
// first (2step-translit), with 95% Wilson whiskers. A model with neither
// romanized variant has no figure.
func Romanization(acc *study.Table) ([]study.Figure, error) {
	est := estimatesOf(acc)
	var models []string
	for k := range est {
		models = appendNew(models, k[0])
	}
	sort.Strings(models)
	native := string(study.Native)
	var out []study.Figure
	for _, m := range models {
		rom, first := est[[3]string{m, string(Romanized), native}], est[[3]string{m, string(TwoStepTranslit), native}]
		if rom == nil && first == nil {
			continue
		}
		base := string(BaselineCands)
		if est[[3]string{m, base, native}] == nil {
			base = string(Baseline)
		}
		bars := []struct {
			name string
			k    [3]string
		}{
			{"native (" + base + ")", [3]string{m, base, native}},
			{"romanized (ablation-romanized)", [3]string{m, string(Romanized), native}},
			{"code-mixed (" + base + ")", [3]string{m, base, string(study.CodeMixed)}},
			{"romanized by the model first (2step-translit)", [3]string{m, string(TwoStepTranslit), native}},
		}
		langs := slices.AppendSeq(slices.Collect(maps.Keys(rom)), maps.Keys(first))
		slices.Sort(langs)
		langs = slices.Compact(langs)
		var names []string
		var values [][]study.Estimate
		n := 0
		for _, b := range bars {
			e := est[b.k]
			if e == nil {
				continue
			}
			row := make([]study.Estimate, len(langs))
			for i, l := range langs {
				row[i] = chart.Lookup(e, l)
				n += row[i].N
			}
			names, values = append(names, b.name), append(values, row)
		}
		o, err := study.IntervalBars(m+" — native, romanized and code-mixed", "accuracy", langs, names, values)
		if err != nil {
			return nil, err
		}
		out = append(out, figureOf(acc, "romanization_"+m, "IndicKLAR Fig. 7",
			m+": accuracy on the native questions as they are, fully romanized, and in their code-mixed form (and romanized by the model first, where run), per language; whiskers the 95% Wilson interval", "n = "+study.Counted(n, "answer"), o))
	}
	return out, nil
}

// estimatesOf indexes accuracy's correct rates by model, strategy and
// form, then language.
func estimatesOf(acc *study.Table) map[[3]string]map[string]study.Estimate {
	est := map[[3]string]map[string]study.Estimate{}
	for _, r := range acc.Rows {
		if acc.Str(r, "metric") != "correct" {
			continue
		}
		put(est, [3]string{acc.Str(r, "model"), acc.Str(r, "strategy"), acc.Str(r, "form")}, acc.Str(r, "language"), study.EstimateOf(acc, r))
	}
	return est
}

// formList names the forms a figure shows, as a caption says them
// ("English, native and code-mixed"; only those drawn).
func formList(forms []string) string {
	words := slices.Clone(forms) // each form once
	if i := slices.Index(words, string(study.English)); i >= 0 {
		words[i] = "English"
	}
	switch len(words) {
	case 0:
		return "no"
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
