package chart

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// Counted writes n and its noun, plural unless n is 1 ("1 language", "4
// languages"; a noun ending in y takes ies: "3 strategies").
func Counted(n int, noun string) string {
	return fmt.Sprintf("%d %s", n, PluralOf(n, noun))
}

// PluralOf is noun in the number n needs; only its last word changes
// ("language pair" → "language pairs").
func PluralOf(n int, noun string) string {
	if n == 1 {
		return noun
	}
	switch {
	case strings.HasSuffix(noun, "y") && !strings.HasSuffix(noun, "ay") && !strings.HasSuffix(noun, "ey"):
		return strings.TrimSuffix(noun, "y") + "ies"
	case strings.HasSuffix(noun, "s"), strings.HasSuffix(noun, "x"):
		return noun + "es"
	}
	return noun + "s"
}

// Round keeps three decimals (a chart label, not a number to compute
// with); NaN is "-", which ECharts draws as no value.
func Round(v float64) any {
	if math.IsNaN(v) {
		return "-"
	}
	return math.Round(v*1000) / 1000
}

// Num formats a statistic for a caption ("n/a" when undefined).
func Num(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.3g", v)
}

// GroupRows groups a table's rows by one column, in first-seen order.
func GroupRows(t *tables.Table, col string) ([]string, map[string][][]any) {
	var keys []string
	by := map[string][][]any{}
	for _, r := range t.Rows {
		k := t.Str(r, col)
		if by[k] == nil {
			keys = append(keys, k)
		}
		by[k] = append(by[k], r)
	}
	return keys, by
}

// wrapText breaks text into lines of at most width characters at spaces.
func wrapText(text string, width int) string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) > width:
			lines, line = append(lines, line), w
		default:
			line += " " + w
		}
	}
	return strings.Join(append(lines, line), "\n")
}
