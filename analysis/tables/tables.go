// Package tables is the study-neutral core of Bhasha's tables: a Table
// of typed cells (they stay numbers until rendered) whose columns are
// declared where it is built (New, the column constructors, Key), with
// what it holds (Description), the paper table it mirrors (Mirrors),
// whether it is a headline table and its natural spreadsheet chart; the
// renderers (CSV files with a header row, Markdown, LaTeX, DataFrames);
// and the analyses every study shares (Accuracy, Scoring, Scaling,
// ModelFamilies, HumanAgreement, Sensitivity, Conclusions, Compare,
// Latency, Requests, Pivot) with the paired helpers a study's own
// analyses use (Index, Paired, Adjusted). A study's own tables live in
// its package. Every rate carries its count k, its size n and a 95%
// Wilson interval; every difference a 95% Wald interval; every test its
// inputs and its p-value, with Holm and Benjamini–Hochberg adjustments
// across the tests of the same table and model.
//
// Every file starts with a column "simulated" (true when the answers
// came from simulated models).
package tables

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-gota/gota/dataframe"
	"github.com/go-gota/gota/series"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/stats"
	"github.com/bhashalab/bhasha/internal/atomicfile"
)

// Table is a header and rows of typed cells. A cell is a string, an int,
// a float64 (NaN: no value, e.g. an undefined correlation) or a bool; it
// stays that value until a renderer (CSV, Markdown, a DataFrame) formats
// it, and tables derived from other tables read the typed values.
type Table struct {
	Name   string
	Header []string
	// Cols are the columns as declared where the table is built (New):
	// name, type, kind, description. Header holds their names. A cell
	// has its column's type, but a Float column may hold an int (a count
	// that Pivot lays out beside a missing cell, NaN).
	Cols []Column
	Rows [][]any
	// Source, when set, makes the rows as they are read instead (Rows is
	// nil; Len, Row, Held): a table as long as the run.
	Source *Source
	// Description is one line on what the table holds, set where it is
	// built (New).
	Description string
	// ColumnDocs describes columns by name for a table built without
	// declared columns (Cols); a declared column carries its description.
	ColumnDocs map[string]string
	// Simulated is true when the answers came from simulated models; the
	// renderers say so (Markdown's title, the CSV's and DataFrame's first
	// column "simulated").
	Simulated bool
	// Note says why the table has no rows, when it has none and its
	// builder knows why (one language: no language pairs; no strategy but
	// the reference: no gains); the report shows it under the table and
	// in the caption of the figure drawn from it. It changes no number.
	Note string
	// Mirrors names the paper table or figure the table mirrors ("" when
	// it is Bhasha's own); Headline marks a table a reader of several runs
	// compares first; Chart, when set, is its natural spreadsheet chart.
	Mirrors  string
	Headline bool
	Chart    *Chart
	// Brief, when set, names the columns a report's page shows of a table
	// too wide to read there whole (those of them that hold a value in
	// some row shown); the CSV files and the workbook hold every column.
	Brief []string
}

// Type is the type of a column's cells.
type Type string

// Column types.
const (
	String Type = "string"
	Int    Type = "int"
	Float  Type = "float64"
	Bool   Type = "bool"
)

// Kind says what a number is, for renderers and readers.
type Kind string

// Column kinds, as a column is declared (see the column constructors).
const (
	KindNone      Kind = ""
	KindCount     Kind = "count"     // k, n, pairs, ...
	KindRate      Kind = "rate"      // a proportion in [0, 1]
	KindPValue    Kind = "p-value"   // p, *_p, p_*
	KindLower     Kind = "lower"     // lower bound of a 95% interval (*_lo)
	KindUpper     Kind = "upper"     // upper bound of a 95% interval (*_hi)
	KindStatistic Kind = "statistic" // z, T, τ, ρ, r, κ, differences
	KindMillis    Kind = "ms"        // a duration in milliseconds
)

// Column describes one column.
type Column struct {
	Name string
	Type Type
	Kind Kind
	// Description says what the cells hold.
	Description string
}

// Numeric reports whether the column holds numbers (int or float64).
func (c Column) Numeric() bool { return c.Type == Int || c.Type == Float }

// Columns describes the table's columns: the declared ones (Cols) when
// the table was built with New; else, for a table built without them,
// each one's type is that of its cells (Int and Float together make
// Float; anything else mixed makes String), its kind KindCount for an
// int column and KindNone otherwise, its description from ColumnDocs; a
// column named as a shared one (Key) of that type is declared as Key
// declares it (its description unless ColumnDocs gives one).
func (t *Table) Columns() []Column {
	if len(t.Cols) == len(t.Header) && len(t.Cols) > 0 {
		return t.Cols
	}
	out := make([]Column, len(t.Header))
	for c, name := range t.Header {
		var typ Type
		for _, r := range t.Rows {
			if c >= len(r) {
				continue
			}
			var ct Type
			switch r[c].(type) {
			case int:
				ct = Int
			case float64:
				ct = Float
			case bool:
				ct = Bool
			default:
				ct = String
			}
			switch {
			case typ == "" || typ == ct:
				typ = ct
			case (typ == Int || typ == Float) && (ct == Int || ct == Float):
				typ = Float
			default:
				typ = String
			}
		}
		col := Column{Name: name, Type: cmp.Or(typ, String), Description: t.ColumnDocs[name]}
		if typ == Int {
			col.Kind = KindCount
		}
		if k, ok := shared(name); ok && (k.Type == col.Type || len(t.Rows) == 0) {
			col.Type, col.Kind = k.Type, k.Kind
			col.Description = cmp.Or(col.Description, k.Description)
		}
		out[c] = col
	}
	return out
}

// Col returns the index of the named column, or -1.
func (t *Table) Col(name string) int { return slices.Index(t.Header, name) }

// Text is cell (row i, column c) as the text views (Markdown, HTML)
// show it: FormatCell.
func (t *Table) Text(i, c int) string {
	if t.Source != nil {
		return FormatCell(t.Row(i, nil)[c])
	}
	return FormatCell(t.Rows[i][c])
}

// Str returns cell (row, column name) when it is a string ("" otherwise).
func (t *Table) Str(row []any, name string) string {
	s, _ := t.cell(row, name).(string)
	return s
}

// Num returns cell (row, column name) as a number: an int or float64
// cell's value, NaN otherwise.
func (t *Table) Num(row []any, name string) float64 { return number(t.cell(row, name)) }

// number is an int or float64 cell's value, NaN for any other cell.
func number(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	}
	return math.NaN()
}

func (t *Table) cell(row []any, name string) any {
	if c := t.Col(name); c >= 0 && c < len(row) {
		return row[c]
	}
	return nil
}

// FormatCell writes a cell as the Markdown and HTML views show it:
// strings as they are, ints in decimal, bools as true/false, floats by
// formatFloat (rounded to six decimals; the CSV holds them exactly:
// WriteCSV).
func FormatCell(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int:
		return strconv.Itoa(x)
	case float64:
		return formatFloat(x)
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// PBelow is the least p-value a reader is shown as a number: the
// float64 machine epsilon, as R's format.pval. A p-value below it (a t
// approximation's 0 at |ρ| = 1, an underflow) is written "< 2.2e-16".
const PBelow = 0x1p-52

// FormatP writes a p-value for a reader (the HTML report, notebooks,
// LaTeX): three significant digits, in scientific notation below 0.001,
// "< 2.2e-16" below PBelow (never zero: a p-value of 0 is an
// approximation's limit, not a probability), "" for NaN. The data files
// (CSV, Parquet, the workbook's cells) keep the computed value.
func FormatP(p float64) string {
	switch {
	case math.IsNaN(p):
		return ""
	case p < PBelow:
		return "< 2.2e-16"
	case p < 1e-3:
		return strconv.FormatFloat(p, 'e', 2, 64)
	}
	return strconv.FormatFloat(p, 'g', 3, 64)
}

// formatFloat writes a number for a text view: "" for NaN, "0" for both
// zeros (never "-0.000000"), six decimals from 10⁻⁴ up, and scientific
// notation with six significant digits below, so that a small p-value
// (1.86e-09) is never rounded to zero.
func formatFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return ""
	case v == 0:
		return "0"
	case math.Abs(v) < 1e-4:
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	return strconv.FormatFloat(v, 'f', 6, 64)
}

// Markdown renders the table as a GitHub-flavoured Markdown table, numbers
// right-aligned, with a first line naming the table and its row count.
func (t *Table) Markdown() string {
	t = t.Held()
	var sb strings.Builder
	fmt.Fprintf(&sb, "**%s** %s\n\n|", mdEscape(t.Name), t.rowCount())
	cols := t.Columns()
	for _, h := range t.Header {
		sb.WriteString(" " + mdEscape(h) + " |")
	}
	sb.WriteString("\n|")
	for _, c := range cols {
		if c.Numeric() {
			sb.WriteString("---:|")
		} else {
			sb.WriteString("---|")
		}
	}
	sb.WriteString("\n")
	for i := range t.Rows {
		sb.WriteString("|")
		for c := range t.Header {
			v := ""
			if c < len(t.Rows[i]) {
				v = t.Text(i, c)
			}
			sb.WriteString(" " + mdEscape(v) + " |")
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

// rowCount is "(N rows)", with ", SIMULATED models" before the ")" when
// the answers came from simulated models.
func (t *Table) rowCount() string {
	if t.Simulated {
		return fmt.Sprintf("(%d rows, SIMULATED models)", len(t.Rows))
	}
	return fmt.Sprintf("(%d rows)", len(t.Rows))
}

// mdEscape keeps a cell inside its Markdown table cell (| escaped, line
// ends as spaces) and shows every other control character as Visible
// does (ESC would reach a terminal that prints the table).
func mdEscape(s string) string {
	return Visible(strings.NewReplacer("|", "\\|", "\n", " ", "\r", " ").Replace(s))
}

// CSVNoteFile is the companion file written beside every folder of CSV
// tables (Write, and the paper-ready exports), holding CSVNote.
const CSVNoteFile = "README.txt"

// CSVNote says what the CSV tables beside it are: exact data for code,
// not files to open by double-click in a spreadsheet.
const CSVNote = `These CSV files are Bhasha's tables as exact data (UTF-8, RFC 4180,
a header row, first column "simulated"), for pandas, DuckDB, polars, R
and the like: every cell is written as the run produced it, every number
in the digits that read back to the same double.

A missing value is an empty cell, whatever the column: a number the
table has none for, and an empty text (a study without strategies or
conditions) alike. The run's scored.parquet holds NULL for an empty
text and the workbook an empty cell, so that all three agree.

Do NOT open them by double-click in Excel, LibreOffice or Google Sheets.
Cells hold text from datasets and model answers, and some of it begins
with =, +, -, @, a tab or a carriage return (a model may answer
"=cmd|' /C calc'!A0"): a spreadsheet that imports a CSV runs such text
as a formula. The cells are deliberately not "neutralised" with a
leading apostrophe, because that would change the data (the number -0.5
would become the text '-0.5). Control characters from a dataset (NUL,
ESC, ...) are kept too.

To look at the tables in a spreadsheet, open the workbook instead
(bhasha report --run DIR --xlsx FILE): it stores all such text as text
cells, never as formulas, and marks every cell whose text Excel's limits
forced it to change.

Read them in code, for example:
  pandas:  pd.read_csv("accuracy.csv", keep_default_na=False, na_values=[""], dtype=TEXT)
           with TEXT = {c: str for c in ("model", "item", "language", "form",
           "strategy", "condition", "role", "domain")}: numbers as numbers, an
           empty cell NaN, a text such as "NA", "None" or "null" (a model's
           answer) kept as text, and key columns as text even when empty or
           all digits (item ids), as scored.parquet has them.
  DuckDB:  SELECT * FROM 'accuracy.csv';
           An empty cell is NULL, and "=" never matches NULL: join on a
           column that may be empty with IS NOT DISTINCT FROM, e.g.
           ON a.condition IS NOT DISTINCT FROM b.condition.
  Go:      encoding/csv (an empty field: missing)
`

// Write writes each table as DIR/<name>.csv (the name through
// FileNames), with a first column "simulated" that says whether the
// answers came from simulated models (each table's Simulated), and
// DIR/README.txt (CSVNote).
func Write(dir string, ts []*Table) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("writing tables: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, CSVNoteFile), []byte(CSVNote)); err != nil {
		return fmt.Errorf("writing tables: %w", err)
	}
	var names FileNames
	for _, t := range ts {
		if err := writeCSV(filepath.Join(dir, names.Name(t.Name)+".csv"), t); err != nil {
			return err
		}
	}
	return nil
}

// writeCSV writes one table atomically (atomicfile): a killed report
// leaves the previous file or the whole new one, never a torn table.
func writeCSV(p string, t *Table) error {
	f, err := atomicfile.Create(p)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := t.WriteCSV(f); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	return f.Commit()
}

// WriteCSV writes the table as CSV: a header row, then one row per table
// row, each preceded by the column "simulated" (t.Simulated: true when
// the answers came from simulated models); cells formatted by FormatCell,
// but numbers, which are exact: a float64 is written in the fewest digits
// that read back to the same float64 (appendExactFloat), an empty cell
// for NaN. Every cell is written exactly, text a spreadsheet would run as
// a formula and control characters included (CSVNote says why).
func (t *Table) WriteCSV(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	line := appendCSVField(nil, "simulated")
	for _, h := range t.Header {
		line = appendCSVField(append(line, ','), h)
	}
	if _, err := bw.Write(append(line, '\n')); err != nil {
		return err
	}
	sim := strconv.FormatBool(t.Simulated)
	var buf []any
	for i := range t.Len() {
		r := t.Row(i, buf)
		buf = r
		line = append(line[:0], sim...)
		for _, v := range r {
			line = appendCSVCell(append(line, ','), v)
		}
		if _, err := bw.Write(append(line, '\n')); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// appendCSVCell appends cell v as a CSV field: a number exactly
// (appendExactFloat), any other cell as FormatCell writes it.
func appendCSVCell(b []byte, v any) []byte {
	switch x := v.(type) {
	case string:
		return appendCSVField(b, x)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case float64:
		return appendExactFloat(b, x)
	case bool:
		return strconv.AppendBool(b, x)
	case nil:
		return b
	}
	return appendCSVField(b, FormatCell(v))
}

// appendExactFloat appends v in the fewest digits that read back
// (strconv.ParseFloat, pandas, DuckDB, R) to the same float64: nothing
// for NaN (a missing number), "0" for both zeros, "inf" and "-inf" for
// the infinities, scientific notation below 10⁻⁴ (1.86e-09), decimals
// from there up (0.38658150076225317).
func appendExactFloat(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return b
	case v == 0:
		return append(b, '0')
	case math.IsInf(v, 1):
		return append(b, "inf"...)
	case math.IsInf(v, -1):
		return append(b, "-inf"...)
	case math.Abs(v) < 1e-4:
		return strconv.AppendFloat(b, v, 'g', -1, 64)
	}
	return strconv.AppendFloat(b, v, 'f', -1, 64)
}

// appendCSVField appends s as encoding/csv's Writer writes a field (comma
// ',', lines ending in '\n'): in quotes, each quote doubled, when it
// holds a comma, a quote, a carriage return or a line feed, begins with
// a space (unicode.IsSpace) or is \. (a PostgreSQL end-of-data mark);
// else as it is.
func appendCSVField(b []byte, s string) []byte {
	quote := s == `\.`
	for i := 0; i < len(s) && !quote; i++ {
		switch s[i] {
		case ',', '"', '\r', '\n':
			quote = true
		}
	}
	if !quote && s != "" {
		r, _ := utf8.DecodeRuneInString(s)
		quote = unicode.IsSpace(r)
	}
	if !quote {
		return append(b, s...)
	}
	b = append(b, '"')
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			break
		}
		b = append(append(b, s[:i+1]...), '"')
		s = s[i+1:]
	}
	return append(append(b, s...), '"')
}

// DataFrame returns the table as a gota DataFrame: a first column
// "simulated" (as in the CSV), then the table's columns in order, each a
// series of the column's type (Columns) built from the typed cells, never
// from their text (an item id "007" stays "007", NaN stays NaN).
func (t *Table) DataFrame() dataframe.DataFrame {
	t = t.Held()
	cols := t.Columns()
	sim := cells(t, func(int) bool { return t.Simulated })
	ss := make([]series.Series, len(cols))
	for c, col := range cols {
		switch col.Type {
		case Int:
			ss[c] = series.New(cells(t, func(i int) int { return int(number(t.Rows[i][c])) }), series.Int, col.Name)
		case Float:
			ss[c] = series.New(cells(t, func(i int) float64 { return number(t.Rows[i][c]) }), series.Float, col.Name)
		case Bool:
			ss[c] = series.New(cells(t, func(i int) bool { b, _ := t.Rows[i][c].(bool); return b }), series.Bool, col.Name)
		default:
			ss[c] = series.New(cells(t, func(i int) string { return t.Text(i, c) }), series.String, col.Name)
		}
	}
	return dataframe.New(append([]series.Series{series.New(sim, series.Bool, "simulated")}, ss...)...)
}

// cells is of(i) for each of t's held rows i.
func cells[T any](t *Table, of func(i int) T) []T {
	v := make([]T, len(t.Rows))
	for i := range v {
		v[i] = of(i)
	}
	return v
}

// Metric is a named 0/1 measure of a scored row, counted by Accuracy and
// compared across conditions by ConditionTests.
type Metric struct {
	Name string
	Of   func(*score.Row) bool
	// Applies, when not nil, limits the metric to the strategies it
	// accepts (a text criterion does not apply to log-likelihood choices).
	Applies func(strategy string) bool
}

// AppliesTo says whether the metric counts answers of the strategy
// (Applies nil: every strategy).
func (m Metric) AppliesTo(strategy string) bool { return m.Applies == nil || m.Applies(strategy) }

// Correct is the study's strict criterion, the first metric of every study.
func Correct() Metric {
	return Metric{Name: "correct", Of: func(r *score.Row) bool { return r.Correct }}
}

// Accuracy is the rate of every metric per model × language × form ×
// strategy × condition. A failed request (or a second stage withheld
// because its first failed) counts in n as a wrong answer (no criterion
// met; the distractor study's hallucination proxy, 1 − correct − abstain,
// takes it), as the authors' scorers count a missing answer; failed says
// how many.
func Accuracy(study string, ms []Metric, rows []score.Row) *Table {
	t := New("accuracy", "every rate per model × language × form × strategy × condition, with k, n, a 95% Wilson interval and the failed requests",
		Keys("study", "model", "language", "form", "strategy", "condition", "metric", "k", "n", "rate", "ci_lo", "ci_hi", "failed")...)
	type group struct{ model, language, form, strategy, condition string }
	by := countRates(rows, ms, func(r *score.Row) (group, bool) {
		return group{r.Key.Model, r.Key.Language, r.Key.Form, r.Key.Strategy, r.Key.Condition}, true
	})
	for _, g := range SortedKeysBy(by, func(g group) []string { return []string{g.model, g.strategy, g.condition, g.language, g.form} }) {
		for i, m := range ms {
			if m.AppliesTo(g.strategy) {
				t.Add(append([]any{study, g.model, g.language, g.form, g.strategy, g.condition, m.Name}, by[g].cells(i)...)...)
			}
		}
	}
	return t
}

// rates counts answers of one group: n, the failed ones, and k[i] those
// meeting metric i.
type rates struct {
	k         []int
	n, failed int
}

// countRates counts the rows key accepts by their key, under each metric
// (a failed answer counts in n as a wrong one, as the authors' scorers
// count it).
func countRates[K comparable](rows []score.Row, ms []Metric, key func(*score.Row) (K, bool)) map[K]*rates {
	by := map[K]*rates{}
	for i := range rows {
		r := &rows[i]
		g, ok := key(r)
		if !ok {
			continue
		}
		c := by[g]
		if c == nil {
			c = &rates{k: make([]int, len(ms))}
			by[g] = c
		}
		c.n++
		if r.Failed {
			c.failed++
		}
		for j, m := range ms {
			if m.Of(r) {
				c.k[j]++
			}
		}
	}
	return by
}

// cells are k, n, the rate with its 95% Wilson interval and failed, of
// metric i.
func (c *rates) cells(i int) []any {
	p := stats.NewProportion(c.k[i], c.n)
	return []any{c.k[i], c.n, p.P, p.Lo, p.Hi, c.failed}
}

// Info describes one table: what it holds and which table or figure of
// a paper it mirrors ("" when it is Bhasha's own), as the table says
// where it is built (Description, Mirrors).
type Info struct {
	Name        string
	Description string
	Mirrors     string
}

// Info is the table's own description.
func (t *Table) Info() Info {
	return Info{Name: t.Name, Description: t.Description, Mirrors: t.Mirrors}
}

// Visible is Bhasha's one policy for the characters an export cannot hold
// or a reader cannot see (NUL, U+0001 and ESC from a dataset make an SVG
// invalid XML and a LaTeX table one pdflatex refuses): each C0 control
// character but tab and line feed (U+0000–U+001F: NUL, U+0001, ESC, CR,
// …) becomes its Unicode control picture (U+2400–U+241F: ␀ ␁ ␛ ␍), DEL
// (U+007F) its picture ␡ (U+2421), and a byte that is not UTF-8, or a
// noncharacter XML forbids (U+FFFE, U+FFFF), the replacement character
// U+FFFD. The text stays readable and still says which character stood
// where; everything else (C1 controls included, which XML 1.0 and UTF-8
// LaTeX hold) is kept, and s itself is returned when nothing changes.
//
// The figures (ECharts options, so their SVG and PNG), the LaTeX and the
// Markdown tables show text through Visible; the workbook changes only
// what XML cannot hold (VisibleXML); CSV files hold the exact text.
func Visible(s string) string {
	v, _ := visible(s, func(r rune) bool { return r == '\t' || r == '\n' })
	return v
}

// VisibleXML applies Visible's replacements only to what an XML document
// cannot hold (C0 controls but tab, line feed and carriage return;
// U+FFFE, U+FFFF; bytes that are not UTF-8), as a workbook's cells need,
// and says how many characters it replaced.
func VisibleXML(s string) (string, int) {
	return visible(s, func(r rune) bool { return r == '\t' || r == '\n' || r == '\r' || r == 0x7f })
}

// ControlPicture is the character Visible shows for r: its Unicode
// control picture for a C0 control or DEL, U+FFFD for U+FFFE, U+FFFF or
// utf8.RuneError, else r itself.
func ControlPicture(r rune) rune {
	switch {
	case r < 0x20:
		return 0x2400 + r
	case r == 0x7f:
		return 0x2421
	case r == 0xfffe || r == 0xffff:
		return utf8.RuneError
	}
	return r
}

// visible replaces every character ControlPicture changes, except those
// keep holds, and counts them.
func visible(s string, keep func(rune) bool) (string, int) {
	var sb strings.Builder
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		// a byte that is not UTF-8 (a real U+FFFD is 3 bytes), or a character to show
		bad := r == utf8.RuneError && size == 1 || r != utf8.RuneError && ControlPicture(r) != r && !keep(r)
		switch {
		case bad:
			if n == 0 {
				sb.Grow(len(s) + 8)
				sb.WriteString(s[:i])
			}
			sb.WriteRune(ControlPicture(r))
			n++
		case n > 0:
			sb.WriteString(s[i : i+size])
		}
		i += size
	}
	if n == 0 {
		return s, 0
	}
	return sb.String(), n
}
