package tables

import "strings"

// ColumnGroup is a run of adjacent columns that a layout table prints
// under one spanning header, as the papers do: IndicKLAR's languages over
// their ACC and CLC sub-columns ("hin_acc", "hin_clc"), Table 15's
// strategies over from / flipped / share, IndicQuest's models over the
// three protocols. First and Last are column indexes (inclusive); Subs
// are the sub-column labels, in order.
type ColumnGroup struct {
	Label       string
	First, Last int
	Subs        []string
}

// ColumnGroups returns the spanning headers of a layout table (a name
// ending in "_wide"): after the leading key columns (those whose name has
// no "_"), every column must be named "<group>_<sub>" (split at the last
// "_") and belong to a run of at least two adjacent columns sharing the
// group. When any value column breaks the rule (the distractor study's
// "es_long" stands alone), the table has no groups and ColumnGroups
// returns nil, so a header is never half grouped.
func (t *Table) ColumnGroups() []ColumnGroup {
	if !strings.HasSuffix(t.Name, "_wide") {
		return nil
	}
	first := 0
	for first < len(t.Header) && !strings.Contains(t.Header[first], "_") {
		first++
	}
	if first == 0 || first == len(t.Header) {
		return nil
	}
	var out []ColumnGroup
	for c := first; c < len(t.Header); c++ {
		i := strings.LastIndex(t.Header[c], "_")
		if i <= 0 || i == len(t.Header[c])-1 {
			return nil
		}
		label, sub := t.Header[c][:i], t.Header[c][i+1:]
		if n := len(out); n > 0 && out[n-1].Label == label && out[n-1].Last == c-1 {
			out[n-1].Last = c
			out[n-1].Subs = append(out[n-1].Subs, sub)
			continue
		}
		out = append(out, ColumnGroup{Label: label, First: c, Last: c, Subs: []string{sub}})
	}
	for _, g := range out {
		if g.Last == g.First {
			return nil
		}
	}
	return out
}

// SubLabel is how a grouped column's sub-header reads: the papers' ACC
// and CLC in capitals, other sub-columns as named.
func SubLabel(sub string) string {
	switch sub {
	case "acc", "clc":
		return strings.ToUpper(sub)
	}
	return sub
}
