package tables

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
