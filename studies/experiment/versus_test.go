package experiment_test

import (
	"math"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/studies/distractors"
	"github.com/bhashalab/bhasha/studies/experiment"
	"github.com/bhashalab/bhasha/studies/indicklar"
	"github.com/bhashalab/bhasha/studies/indicquest"
)

func table(name string, header []string, rows ...[]any) *tables.Table {
	return &tables.Table{Name: name, Header: header, Rows: rows, Simulated: true}
}

// z is Φ⁻¹(0.975), the 95% normal quantile.
const z = 1.959963984540054

// wilson is the Wilson score interval written out from its formula, the
// golden the tests compare with: centre = (k + z²/2) / (n + z²),
// half = z / (n + z²) · sqrt(k(n−k)/n + z²/4).
func wilson(k, n float64) (lo, hi float64) {
	centre := (k + z*z/2) / (n + z*z)
	half := z / (n + z*z) * math.Sqrt(k*(n-k)/n+z*z/4)
	return centre - half, centre + half
}

// A published rate with its n carries a Wilson interval: at n = 500 a
// rate of 0.5 is 0.5 ± 0.0437 (k = 250); k is the rate's count rounded.
func TestPublishedInterval(t *testing.T) {
	lo500, hi500 := wilson(250, 500)
	if h := (hi500 - lo500) / 2; math.Abs(h-0.0437) > 0.0001 { // the hand-worked half-width
		t.Fatalf("golden half-width %v", h)
	}
	lo148, hi148 := wilson(120, 148)
	for _, c := range []struct {
		name   string
		p      experiment.PublishedValue
		lo, hi float64
		ok     bool
	}{
		{"0.5 of 500", experiment.PublishedValue{Value: 0.5, N: 500, Kind: "rate"}, lo500, hi500, true},
		{"81.1% of 148 is 120 of 148", experiment.PublishedValue{Value: 0.811, N: 148, Kind: "rate"}, lo148, hi148, true},
		{"no n", experiment.PublishedValue{Value: 0.5, Kind: "rate"}, math.NaN(), math.NaN(), false},
		{"a CLC has none", experiment.PublishedValue{Value: 0.5, N: 2619, Kind: "clc"}, math.NaN(), math.NaN(), false},
		{"a count has none", experiment.PublishedValue{Value: 120, N: 148, Kind: "count"}, math.NaN(), math.NaN(), false},
	} {
		lo, hi, ok := experiment.PublishedInterval(c.p)
		if ok != c.ok || (ok && (math.Abs(lo-c.lo) > 1e-12 || math.Abs(hi-c.hi) > 1e-12)) || (!ok && (!math.IsNaN(lo) || !math.IsNaN(hi))) {
			t.Errorf("%s: [%v, %v] %v, want [%v, %v] %v", c.name, lo, hi, ok, c.lo, c.hi, c.ok)
		}
	}
}

// The published numbers beside a run's: matched by served name, each
// side's interval, agreement when the intervals overlap, CLC's languages
// on each side, a run table's column with its declared interval, seconds
// against milliseconds, a model named in Keys by its served id, and
// numbers the run lacks listed as such.
func TestVersus(t *testing.T) {
	const llama = "meta-llama/Llama-3.1-8B-Instruct"
	pub := []experiment.PublishedValue{
		{Paper: "p", Where: "Table 3", Model: llama, Language: "eng", Form: "english", Strategy: "qa", Condition: "hi", Metric: "hallucination", Value: 0.710, N: 500, Kind: "rate"},
		{Paper: "p", Where: "Table 3", Model: llama, Language: "eng", Form: "english", Strategy: "qa", Condition: "clean", Metric: "correct", Value: 0.518, N: 500, Kind: "rate"},
		{Paper: "p", Where: "Table 3", Model: llama, Language: "eng", Form: "english", Strategy: "qa", Condition: "clean", Metric: "abstain", Value: 0.066, N: 500, Kind: "rate"},
		{Paper: "p", Where: "no n", Model: llama, Language: "eng", Form: "english", Strategy: "qa", Condition: "zh", Metric: "correct", Value: 0.4, Kind: "rate"},
		{Paper: "p", Where: "Table 9", Model: llama, Language: "hin", Form: "native", Strategy: "baseline", Metric: "clc", Value: 0.539, Others: 17, Kind: "clc", Reading: "plain"},
		{Paper: "p", Where: "Table 9", Model: llama, Language: "hin", Form: "native", Strategy: "baseline-cands", Metric: "clc", Value: 0.539, Others: 17, Kind: "clc", Reading: "candidates"},
		{Paper: "p", Where: "Table 9", Model: llama, Language: "tel", Form: "native", Strategy: "baseline", Metric: "clc", Value: 0.49, Others: 17, Kind: "clc"},
		{Paper: "p", Where: "Table 8", Model: llama, Language: "ben", Form: "native", Strategy: "baseline", Metric: "clc", Value: 0.6, Kind: "clc"},
		{Paper: "p", Where: "§5.3", Model: llama, Language: "eng", Form: "english", Strategy: "qa", Condition: "hi", Metric: "recovery_rate", Value: 0.811, N: 148, Kind: "rate", Table: "script_decomposition"},
		{Paper: "p", Where: "Table 6", Model: llama, Strategy: "tint-cm", Metric: "mean_ms", Value: 0.09, Kind: "seconds", Table: "latency"},
		{Paper: "p", Where: "§5", Language: "eng", Metric: "diff", Value: 0.135, Kind: "gain", Table: "model_gaps", Keys: [][2]string{{"a", "@" + llama}, {"b", "@other/model"}}},
		{Paper: "p", Where: "§5", Language: "hin", Metric: "diff", Value: 0.2, Kind: "gain", Table: "model_gaps", Keys: [][2]string{{"a", "@" + llama}, {"b", "@absent/model"}}},
		{Paper: "p", Where: "§A.4", Strategy: "tint-cm", Metric: "mean_acc_gain", Value: 0.165, Kind: "gain", Table: "strategy_families"},
		{Paper: "p", Where: "Table 10", Model: llama, Language: "*", Form: "native", Metric: "pearson_r", Value: -0.717, N: 18, Kind: "correlation", Table: "tokenization"},
		{Paper: "p", Where: "§5.5", Model: llama, Metric: "pair_jaccard_min", Value: 0.4, Kind: "clc"},
		{Paper: "p", Where: "elsewhere", Model: "absent/model", Language: "eng", Form: "english", Strategy: "qa", Condition: "hi", Metric: "correct", Value: 0.3, N: 500, Kind: "rate"},
	}
	acc := table("accuracy", []string{"model", "language", "form", "strategy", "condition", "metric", "k", "n", "rate", "ci_lo", "ci_hi"},
		[]any{"llama", "eng", "english", "qa", "hi", "hallucination", 133, 200, 0.665, 0.597, 0.727},
		[]any{"llama", "eng", "english", "qa", "clean", "correct", 120, 200, 0.6, 0.531, 0.665},
		[]any{"llama", "eng", "english", "qa", "clean", "abstain", 40, 200, 0.2, 0.150, 0.261},
		[]any{"llama", "eng", "english", "qa", "zh", "correct", 90, 200, 0.45, 0.382, 0.520})
	clc := table("clc_mean", []string{"model", "strategy", "form", "language", "others", "mean_jaccard"},
		[]any{"llama", "baseline", "native", "hin", 17, 0.5},
		[]any{"llama", "baseline-cands", "native", "hin", 4, 0.7},
		[]any{"llama", "baseline", "native", "ben", 4, 0.62})
	dec := tables.New("script_decomposition", "", tables.Key("model"), tables.Text("condition", ""), tables.Proportion("recovery_rate", ""),
		tables.Lower("recovery_lo", ""), tables.Upper("recovery_hi", ""))
	dec.Add("llama", "hi", 46.0/69, 0.55, 0.77)
	dec.Add("llama", "clean", math.NaN(), math.NaN(), math.NaN())
	lat := table("latency", []string{"model", "strategy", "mean_ms"}, []any{"llama", "tint-cm", 120.0}, []any{"llama", "baseline", 300.0})
	gaps := table("model_gaps", []string{"language", "protocol", "a", "b", "diff"}, []any{"eng", "judge", "llama", "other", 0.1}, []any{"hin", "judge", "llama", "other", 0.3})
	tok := table("tokenization", []string{"model", "language", "n", "pearson_r"}, []any{"llama", "hin", 300, math.NaN()}, []any{"llama", "*", 5, -0.6})
	fam := table("strategy_families", []string{"family", "strategy", "mean_acc_gain"}, []any{"TinT", "tint-cm", 0.15}, []any{"TinT", "tint-en", 0.2})
	v := experiment.Versus(pub, []*tables.Table{acc, clc, dec, lat, gaps, fam, tok}, map[string]string{"llama": llama, "other": "other/model"})
	if !v.Simulated || !v.Headline || len(v.Cols) != len(v.Header) {
		t.Fatalf("versus_paper: simulated %v, headline %v, %d declared columns", v.Simulated, v.Headline, len(v.Cols))
	}
	for _, c := range v.Columns() {
		if c.Description == "" {
			t.Errorf("column %s has no description", c.Name)
		}
	}
	got := map[string][]any{}
	for _, r := range v.Rows {
		got[v.Str(r, "where")+"/"+v.Str(r, "metric")+"/"+v.Str(r, "condition")+v.Str(r, "language")+v.Str(r, "reading")] = r
	}
	lo355, _ := wilson(355, 500)
	for _, c := range []struct {
		key, agreement string
		run, diff      float64
		paperLo        float64 // NaN: none
		others         string
	}{
		// 0.710 at n = 500 is [0.668, 0.749]; the run's [0.597, 0.727] overlaps it.
		{"Table 3/hallucination/hieng", experiment.AgreeOverlap, 0.665, -0.045, lo355, ""},
		// 0.518 (259 of 500, [0.474, 0.562]) against [0.531, 0.665]: the paper's point is outside the run's
		// interval, but the intervals overlap, so the numbers are compatible.
		{"Table 3/correct/cleaneng", experiment.AgreeOverlap, 0.6, 0.082, 0.474, ""},
		// 0.066 (33 of 500, [0.047, 0.091]) against [0.150, 0.261]: apart.
		{"Table 3/abstain/cleaneng", experiment.AgreeApart, 0.2, 0.134, 0.047, ""},
		{"no n/correct/zheng", experiment.AgreeNoInterval, 0.45, 0.05, math.NaN(), ""},
		{"Table 9/clc/hinplain", experiment.AgreeNoInterval, 0.5, -0.039, math.NaN(), "same"},
		{"Table 9/clc/hincandidates", experiment.AgreeNoInterval, 0.7, 0.161, math.NaN(), "MISMATCH: run 4, paper 17"},
		{"Table 8/clc/ben", experiment.AgreeNoInterval, 0.62, 0.02, math.NaN(), "paper's not stated"},
		{"§5.3/recovery_rate/hieng", experiment.AgreeOverlap, 46.0 / 69, 46.0/69 - 0.811, 0.74, ""},
		{"Table 6/mean_ms/", experiment.AgreeNoInterval, 0.12, 0.03, math.NaN(), ""},
		{"§5/diff/eng", experiment.AgreeNoInterval, 0.1, -0.035, math.NaN(), ""},
		{"Table 9/clc/tel", experiment.AgreeNotRun, math.NaN(), math.NaN(), math.NaN(), ""},
		{"§5/diff/hin", experiment.AgreeNotRun, math.NaN(), math.NaN(), math.NaN(), ""},
		{"Table 10/pearson_r/*", experiment.AgreeNoInterval, -0.6, 0.117, math.NaN(), ""},
		{"§A.4/mean_acc_gain/", experiment.AgreeNoInterval, 0.15, -0.015, math.NaN(), ""},
		{"§5.5/pair_jaccard_min/", experiment.AgreeNoRunValue, math.NaN(), math.NaN(), math.NaN(), ""},
	} {
		r := got[c.key]
		if r == nil {
			t.Errorf("%s: no row in %v", c.key, v.Rows)
			continue
		}
		near := func(a, b float64, tol float64) bool { return (math.IsNaN(a) && math.IsNaN(b)) || math.Abs(a-b) <= tol }
		if v.Str(r, "agreement") != c.agreement || !near(v.Num(r, "run"), c.run, 1e-9) || !near(v.Num(r, "diff"), c.diff, 1e-9) ||
			!near(v.Num(r, "paper_lo"), c.paperLo, 0.0005) || v.Str(r, "others_check") != c.others {
			t.Errorf("%s: %v", c.key, r)
		}
	}
	if r := got["Table 3/hallucination/hieng"]; v.Num(r, "paper_n") != 500 || v.Num(r, "run_n") != 200 || v.Str(r, "model") != "llama" {
		t.Errorf("n and model beside the hallucination row: %v", r)
	}
	if r := got["Table 10/pearson_r/*"]; v.Num(r, "run_n") != 5 || v.Num(r, "paper_n") != 18 {
		t.Errorf("the languages beside the correlation: %v", r)
	}
	if r := got["Table 9/clc/hincandidates"]; v.Num(r, "run_others") != 4 || v.Num(r, "paper_others") != 17 {
		t.Errorf("the languages beside the CLC row: %v", r)
	}
	if got["elsewhere/correct/hieng"] != nil {
		t.Error("a model the run lacks is listed")
	}
	if len(v.Rows) != len(pub)-1 {
		t.Errorf("%d rows for %d published values (one of a model the run lacks)", len(v.Rows), len(pub))
	}
}

// A key naming a model by its served id matches the run's first model
// name in order when two names serve that id, on every call.
func TestVersusKeyOfSharedServedID(t *testing.T) {
	pub := []experiment.PublishedValue{{Paper: "p", Where: "§5", Language: "eng", Metric: "diff", Value: 0.1, Kind: "gain", Table: "model_gaps",
		Keys: [][2]string{{"a", "@org/m"}}}}
	gaps := table("model_gaps", []string{"language", "a", "diff"}, []any{"eng", "m-a", 0.25}, []any{"eng", "m-b", 0.5})
	served := map[string]string{"m-b": "org/m", "m-a": "org/m", "x": "org/x"}
	for range 32 {
		v := experiment.Versus(pub, []*tables.Table{gaps}, served)
		if len(v.Rows) != 1 || v.Num(v.Rows[0], "run") != 0.25 {
			t.Fatalf("rows %v, want the run value 0.25 of m-a", v.Rows)
		}
	}
}

// Every study's published file reads, each rate in [0, 1], each with a
// known kind; IndicKLAR's Table 9 carries both readings of its Baseline.
func TestPublishedFiles(t *testing.T) {
	for _, c := range []struct {
		name string
		read func() ([]experiment.PublishedValue, error)
		min  int
	}{{"indicklar", indicklar.Published, 300}, {"distractors", distractors.Published, 50}, {"indicquest", indicquest.Published, 15}} {
		pub, err := c.read()
		if err != nil || len(pub) < c.min {
			t.Fatalf("%s: %d published values, %v", c.name, len(pub), err)
		}
		readings := map[string]int{}
		for _, p := range pub {
			if p.Where == "Table 9" && p.Reading != "" {
				readings[p.Reading+"/"+p.Strategy]++
			}
			if p.Kind == "clc" && p.Metric == "clc" && p.Where == "Table 9" && p.Others != 17 {
				t.Errorf("%s: Table 9's CLC over %d other languages, want 17: %+v", c.name, p.Others, p)
			}
		}
		if c.name == "indicklar" && (readings["table9: plain baseline/baseline"] != 30 || readings["table9: candidates baseline/baseline-cands"] != 30) {
			t.Errorf("Table 9's Baseline readings: %v", readings)
		}
	}
}

// A published file that cannot be read names the file, line and field,
// and returns nothing.
func TestReadPublishedErrors(t *testing.T) {
	const head = "paper,where,model,language,form,strategy,condition,metric,value,n,kind\n"
	for _, c := range []struct{ name, file, want string }{
		{"old ten columns still read", "paper,where,model,language,form,strategy,condition,metric,value,note\np,T,m,hin,native,baseline,,correct,0.5,\n", ""},
		{"unknown column", "paper,where,model,language,form,strategy,condition,metric,value,page\n", `line 1: unknown column "page"`},
		{"missing column", "paper,where,model,language,form,strategy,condition,metric\n", `no column "value"`},
		{"bad value", head + "p,T,m,hin,native,baseline,,correct,x,500,rate\n", `line 2 field "value"`},
		{"bad n", head + "p,T,m,hin,native,baseline,,correct,0.5,five,rate\n", `line 2 field "n"`},
		{"unknown kind", head + "p,T,m,hin,native,baseline,,correct,0.5,500,share\n", `line 2 field "kind": unknown kind "share"`},
		{"rate above 1", head + "p,T,m,hin,native,baseline,,correct,1.5,500,rate\n", `line 2 field "value": rate 1.5`},
		{"bad keys", "paper,where,model,language,form,strategy,condition,metric,value,keys\np,T,m,hin,native,baseline,,correct,0.5,a\n", `line 2 field "keys"`},
	} {
		pub, err := experiment.ReadPublished(fstest.MapFS{"published/x.csv": {Data: []byte(c.file)}}, "published/*.csv")
		switch {
		case c.want == "" && (err != nil || len(pub) != 1 || pub[0].Kind != "rate"):
			t.Errorf("%s: %v %v", c.name, pub, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "published/x.csv") || pub != nil):
			t.Errorf("%s: %v, want an error naming the file and %q", c.name, err, c.want)
		}
	}
}

// Each reading of Table 9's Baseline is tallied against the run: the
// plain baseline's interval overlaps the paper's, the candidates'
// baseline lies apart, and rows without a reading are left out.
func TestVersusReadings(t *testing.T) {
	const llama = "meta-llama/Llama-3.1-8B-Instruct"
	row := func(strategy, reading, language string, value float64) experiment.PublishedValue {
		return experiment.PublishedValue{Paper: "p", Where: "Table 9", Model: llama, Language: language, Form: "native", Strategy: strategy,
			Metric: "correct", Value: value, N: 2619, Kind: "rate", Reading: reading}
	}
	pub := []experiment.PublishedValue{
		row("baseline", "plain", "hin", 0.575), row("baseline-cands", "candidates", "hin", 0.575),
		row("baseline", "plain", "tel", 0.482), row("baseline-cands", "candidates", "tel", 0.482),
		row("tint-cm", "", "hin", 0.843),
	}
	acc := table("accuracy", []string{"model", "language", "form", "strategy", "condition", "metric", "k", "n", "rate", "ci_lo", "ci_hi"},
		[]any{"llama", "hin", "native", "baseline", "", "correct", 1150, 2000, 0.575, 0.553, 0.597},
		[]any{"llama", "hin", "native", "baseline-cands", "", "correct", 1400, 2000, 0.700, 0.680, 0.720},
		[]any{"llama", "hin", "native", "tint-cm", "", "correct", 1700, 2000, 0.850, 0.834, 0.865})
	v := experiment.Versus(pub, []*tables.Table{acc}, map[string]string{"llama": llama})
	rd := experiment.VersusReadings(v)
	if rd == nil || len(rd.Rows) != 2 || !rd.Simulated {
		t.Fatalf("versus_readings: %v", rd)
	}
	for _, c := range []struct {
		reading                                   string
		rows, compared, intervals, overlap, apart int
		meanAbsDiff                               float64
	}{
		{"plain", 2, 1, 1, 1, 0, 0},
		{"candidates", 2, 1, 1, 0, 1, 0.125},
	} {
		var r []any
		for _, x := range rd.Rows {
			if rd.Str(x, "reading") == c.reading {
				r = x
			}
		}
		if r == nil || rd.Num(r, "rows") != float64(c.rows) || rd.Num(r, "compared") != float64(c.compared) || rd.Num(r, "with_interval") != float64(c.intervals) ||
			rd.Num(r, "overlap") != float64(c.overlap) || rd.Num(r, "apart") != float64(c.apart) || math.Abs(rd.Num(r, "mean_abs_diff")-c.meanAbsDiff) > 1e-9 {
			t.Errorf("reading %s: %v", c.reading, r)
		}
	}
	if experiment.VersusReadings(experiment.Versus(pub[4:], []*tables.Table{acc}, map[string]string{"llama": llama})) != nil {
		t.Error("a summary of rows without readings")
	}
}
