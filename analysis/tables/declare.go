package tables

import "fmt"

// New starts a table whose columns are declared where it is built: its
// Header is their names, Columns returns them as declared (never guessed
// from a name), and Add checks each row against them.
func New(name, description string, cols ...Column) *Table {
	t := &Table{Name: name, Description: description, Cols: cols, Header: make([]string, len(cols))}
	for i, c := range cols {
		t.Header[i] = c.Name
	}
	return t
}

// Add appends a row of cells (string, int, float64 or bool; a
// fmt.Stringer is stored as its String, anything else as fmt.Sprint).
// A row whose length differs from the declared columns is a programming
// error and panics.
func (t *Table) Add(cells ...any) {
	if len(t.Cols) > 0 && len(cells) != len(t.Cols) {
		panic(fmt.Sprintf("tables: table %s: a row of %d cells for %d columns", t.Name, len(cells), len(t.Cols)))
	}
	row := make([]any, len(cells))
	for i, c := range cells {
		switch v := c.(type) {
		case string, int, float64, bool:
			row[i] = v
		case fmt.Stringer:
			row[i] = v.String()
		default:
			row[i] = fmt.Sprint(v)
		}
	}
	t.Rows = append(t.Rows, row)
}

// Chart is a table's natural spreadsheet chart: the first Keys columns
// name each series (one per row), the columns after them are its values;
// Title is the chart's title.
type Chart struct {
	Keys  int
	Title string
}

// The column constructors below declare a column with its type and kind.

// Text declares a string column.
func Text(name, description string) Column {
	return Column{Name: name, Type: String, Description: description}
}

// Flag declares a bool column.
func Flag(name, description string) Column {
	return Column{Name: name, Type: Bool, Description: description}
}

// Count declares an int column of counts (k, n, pairs).
func Count(name, description string) Column {
	return Column{Name: name, Type: Int, Kind: KindCount, Description: description}
}

// Integer declares an int column that is not a count (a step, a rank).
func Integer(name, description string) Column {
	return Column{Name: name, Type: Int, Description: description}
}

// Proportion declares a float column holding a proportion in [0, 1].
func Proportion(name, description string) Column {
	return Column{Name: name, Type: Float, Kind: KindRate, Description: description}
}

// Lower declares the lower bound of a 95% interval.
func Lower(name, description string) Column {
	return Column{Name: name, Type: Float, Kind: KindLower, Description: description}
}

// Upper declares the upper bound of a 95% interval.
func Upper(name, description string) Column {
	return Column{Name: name, Type: Float, Kind: KindUpper, Description: description}
}

// PValue declares a p-value column.
func PValue(name, description string) Column {
	return Column{Name: name, Type: Float, Kind: KindPValue, Description: description}
}

// Statistic declares a float column holding a test statistic, a
// correlation or a difference.
func Statistic(name, description string) Column {
	return Column{Name: name, Type: Float, Kind: KindStatistic, Description: description}
}

// Millis declares a float column holding milliseconds.
func Millis(name, description string) Column {
	return Column{Name: name, Type: Float, Kind: KindMillis, Description: description}
}

// Number declares a float column of another kind (a mean length, a size).
func Number(name, description string) Column {
	return Column{Name: name, Type: Float, Description: description}
}

// KindCategory marks a text column whose values name a category (a
// model, a language, a verdict): the sample explorer offers a filter of
// its values.
const KindCategory Kind = "category"

// Category declares a text column of categories (KindCategory).
func Category(name, description string) Column {
	return Column{Name: name, Type: String, Kind: KindCategory, Description: description}
}
