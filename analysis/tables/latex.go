package tables

import (
	"fmt"
	"math"
	"strings"
)

// LaTeX renders the table as a booktabs tabular in a table float: the
// header bold-free in a \toprule/\midrule frame, numbers right-aligned
// with three decimals (p-values and small numbers in scientific
// notation, as FormatCell), text left-aligned with LaTeX's special
// characters escaped, and a caption with the table's name, its row count
// and SIMULATED when it is. A layout table with ColumnGroups gets the
// papers' two-row header: each group's label spanning its sub-columns
// (\multicolumn with a \cmidrule under it), then the key columns' names
// and the sub-labels (ACC, CLC). Needs \usepackage{booktabs}.
func (t *Table) LaTeX() string {
	t = t.Held()
	cols := t.Columns()
	var sb strings.Builder
	sb.WriteString("\\begin{table}[t]\n\\centering\n\\small\n\\begin{tabular}{")
	for _, c := range cols {
		align := "l"
		if c.Numeric() {
			align = "r"
		}
		sb.WriteString(align)
	}
	sb.WriteString("}\n\\toprule\n")
	head := make([]string, len(t.Header))
	for i, h := range t.Header {
		head[i] = latexEscape(h)
	}
	if groups := t.ColumnGroups(); groups != nil {
		// the papers' layout: a spanning row of groups over their sub-columns
		span := make([]string, groups[0].First, len(t.Header))
		var rules []string
		for _, g := range groups {
			span = append(span, fmt.Sprintf("\\multicolumn{%d}{c}{%s}", g.Last-g.First+1, latexEscape(g.Label)))
			rules = append(rules, fmt.Sprintf("\\cmidrule(lr){%d-%d}", g.First+1, g.Last+1))
			for i, sub := range g.Subs {
				head[g.First+i] = latexEscape(SubLabel(sub))
			}
		}
		sb.WriteString(strings.Join(span, " & ") + " \\\\\n" + strings.Join(rules, " ") + "\n")
	}
	sb.WriteString(strings.Join(head, " & ") + " \\\\\n\\midrule\n")
	for i, r := range t.Rows {
		cells := make([]string, len(t.Header))
		for c := range t.Header {
			if c >= len(r) {
				continue
			}
			if x, ok := r[c].(float64); ok && cols[c].Kind == KindPValue {
				cells[c] = latexEscape(FormatP(x))
				continue
			}
			cells[c] = latexEscape(latexCell(r[c], t.Text(i, c)))
		}
		sb.WriteString(strings.Join(cells, " & ") + " \\\\\n")
	}
	caption := latexEscape(t.Name) + " " + t.rowCount()
	if t.Description != "" {
		caption += ": " + latexEscape(t.Description)
	}
	fmt.Fprintf(&sb, "\\bottomrule\n\\end{tabular}\n\\caption{%s}\n\\label{tab:%s}\n\\end{table}\n", caption, strings.ReplaceAll(t.Name, "_", "-"))
	return sb.String()
}

// latexCell writes floats with three decimals (scientific notation below
// 0.001, as the text renderers do), other cells as FormatCell does.
func latexCell(v any, text string) string {
	if x, ok := v.(float64); ok && !math.IsNaN(x) && !math.IsInf(x, 0) && x != 0 && math.Abs(x) >= 1e-3 {
		return fmt.Sprintf("%.3f", x)
	}
	return text
}

// latexEscape escapes LaTeX's special characters (\ { } $ & # ^ _ % ~),
// writes tab and line feed as spaces (a blank line would end the
// tabular's paragraph) and every other control character as Visible
// does (its control picture: no byte under 0x20 but the line ends
// between cells reaches the file, as pdflatex refuses them).
func latexEscape(s string) string {
	r := strings.NewReplacer(`\`, `\textbackslash{}`, `{`, `\{`, `}`, `\}`, `$`, `\$`, `&`, `\&`, `#`, `\#`, `^`, `\textasciicircum{}`,
		`_`, `\_`, `%`, `\%`, `~`, `\textasciitilde{}`, "\t", " ", "\n", " ")
	return r.Replace(Visible(s))
}
