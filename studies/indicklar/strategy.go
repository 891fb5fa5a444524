package indicklar

import (
	"fmt"
	"slices"
	"strings"
)

// Strategy is an IndicKLAR prompting strategy.
type Strategy string

// The strategies: IndicKLAR's Table 1 (eight rows, its Base being Baseline),
// Table 6's Obj-Baseline, Table 2's CoT and the ablations of Tables 2 and 8
// and Figure 7 (names as in the paper in the comments).
const (
	Baseline        Strategy = "baseline"       // Baseline: 3-shot cloze, plain completion
	BaselineCands   Strategy = "baseline-cands" // Obj-Baseline: 3-shot cloze, candidates and "Answer:" on the test item
	TinTCM          Strategy = "tint-cm"        // TinT-CM: translate-in-thought to code-mixed
	TinTEN          Strategy = "tint-en"        // TinT-EN: translate-in-thought to English
	OneStepCM       Strategy = "1step-cm"       // 1Step-CM+Ans: code-mixed translation and answer in one JSON
	OneStepEN       Strategy = "1step-en"       // 1Step-EN+Ans
	TwoStepCM       Strategy = "2step-cm"       // 2Step-CM: code-mix first, then answer
	TwoStepEN       Strategy = "2step-en"       // 2Step-EN: translate first, then answer
	TwoStepTranslit Strategy = "2step-translit" // 2Step-Translit: romanize first, then answer
	CoT             Strategy = "cot"            // Baseline + CoT (paper Appendix F; no published code)
	CoTCands        Strategy = "cot-cands"      // Baseline + Candidates + CoT

	// Entity-context and romanization ablations (IndicKLAR Tables 2 and 8),
	// in the Obj-Baseline format.
	EntityEN  Strategy = "ablation-entity-en"  // native context, English entity (the paper's SubInj)
	ContextEN Strategy = "ablation-context-en" // English context, native entity
	Romanized Strategy = "ablation-romanized"  // the native question fully romanized
)

// Strategies lists every strategy in the paper's order.
var Strategies = []Strategy{Baseline, BaselineCands, TwoStepCM, TwoStepEN, TwoStepTranslit, OneStepCM, OneStepEN, TinTCM, TinTEN, CoT, CoTCands,
	EntityEN, ContextEN, Romanized}

var strategyAliases = map[string]Strategy{
	"obj-baseline": BaselineCands, "baseline+candidates": BaselineCands, "baseline-candidates": BaselineCands,
	"1step-cm+ans": OneStepCM, "1step-en+ans": OneStepEN, "2step-transliteration": TwoStepTranslit,
	"baseline+cot": CoT, "baseline+candidates+cot": CoTCands,
}

// ParseStrategy accepts the names above and the paper's spellings
// ("TinT-CM", "1Step-EN+Ans", "Obj-Baseline", "2Step-Translit").
func ParseStrategy(s string) (Strategy, error) {
	k := strings.ToLower(strings.TrimSpace(s))
	if slices.Contains(Strategies, Strategy(k)) {
		return Strategy(k), nil
	}
	if st, ok := strategyAliases[k]; ok {
		return st, nil
	}
	names := make([]string, len(Strategies))
	for i, st := range Strategies {
		names[i] = string(st)
	}
	return "", fmt.Errorf("unknown strategy %q (want one of %s)", s, strings.Join(names, ", "))
}

// Stages is 2 for the translate-then-answer strategies, else 1.
func (s Strategy) Stages() int {
	if s.Family() == "2Step" {
		return 2
	}
	return 1
}

// Target is the TARGET_LANG kind: "cm", "en", "translit" or "".
func (s Strategy) Target() string { return strategyTraits[s][1] }

// JSON reports whether the strategy's answer is a JSON object.
func (s Strategy) JSON() bool { return s != Baseline && s != BaselineCands && !s.Ablation() }

// Ablation reports whether s is one of the entity/romanization ablations.
func (s Strategy) Ablation() bool { return s == EntityEN || s == ContextEN || s == Romanized }

// Family is the strategy's family in the paper's A.3 ("1Step", "2Step",
// "TinT", "CoT"), or "" for the baselines and ablations.
func (s Strategy) Family() string { return strategyTraits[s][0] }

// strategyTraits are each strategy's Family and Target (none: "", "").
var strategyTraits = map[Strategy][2]string{
	OneStepCM: {"1Step", "cm"}, OneStepEN: {"1Step", "en"},
	TwoStepCM: {"2Step", "cm"}, TwoStepEN: {"2Step", "en"}, TwoStepTranslit: {"2Step", "translit"},
	TinTCM: {"TinT", "cm"}, TinTEN: {"TinT", "en"}, CoT: {"CoT", ""}, CoTCands: {"CoT", ""},
}

// FamilyOf is the family of a strategy name ("" when unknown).
func FamilyOf(name string) string {
	s, err := ParseStrategy(name)
	if err != nil {
		return ""
	}
	return s.Family()
}
