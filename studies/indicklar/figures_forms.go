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
	type key struct{ model, strategy string }
	rates := map[key]map[string]map[string]study.Estimate{} // → form → language → rate
	ns := map[key]int{}
	for _, r := range acc.Rows {
		s := acc.Str(r, "strategy")
		if acc.Str(r, "metric") != "correct" || (s != string(Baseline) && s != string(BaselineCands)) {
			continue
		}
		k := key{acc.Str(r, "model"), s}
		if rates[k] == nil {
			rates[k] = map[string]map[string]study.Estimate{}
		}
		f := acc.Str(r, "form")
		if rates[k][f] == nil {
			rates[k][f] = map[string]study.Estimate{}
		}
		rates[k][f][acc.Str(r, "language")] = study.EstimateOf(acc, r)
		ns[k] += int(acc.Num(r, "n"))
	}
	keys := slices.Collect(maps.Keys(rates))
	sort.Slice(keys, func(i, j int) bool { return keys[i].model+keys[i].strategy < keys[j].model+keys[j].strategy })
	var out []study.Figure
	for _, k := range keys {
		var langs []string
		for f, m := range rates[k] {
			if f == string(study.English) {
				continue
			}
			for l := range m {
				langs = appendNew(langs, l)
			}
		}
		sort.Strings(langs)
		var names []string
		var values [][]study.Estimate
		for _, f := range []string{string(study.English), string(study.Native), string(study.CodeMixed)} {
			m, ok := rates[k][f]
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
		o, err := study.IntervalBars(fmt.Sprintf("%s — %s accuracy by form", k.model, k.strategy), "accuracy", langs, names, values)
		if err != nil {
			return nil, err
		}
		stated := "n = " + study.Counted(ns[k], "answer")
		out = append(out, study.FigureOf(acc, "form_accuracy_"+k.model+"_"+k.strategy, "IndicKLAR Fig. 2",
			fmt.Sprintf("%s, %s: accuracy on %s questions per language, whiskers the 95%% Wilson interval (%s)", k.model, k.strategy, formList(names), stated), stated, o))
	}
	return out, nil
}

// formList names the forms a figure shows, as a caption says them
// ("English, native and code-mixed"; only those drawn).
func formList(forms []string) string {
	words := make([]string, len(forms))
	for i, f := range forms {
		words[i] = f
		if f == string(study.English) {
			words[i] = "English"
		}
	}
	switch len(words) {
	case 0:
		return "no"
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
