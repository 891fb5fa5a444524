package chart

import (
	"encoding/json"
	"fmt"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// Empty is a figure with nothing to draw, from table t: its title, and
// why (the table's note; "the table … has no rows" when why is "")
// written where the plot would be and in its caption, whose n is 0 of
// unit ("n = 0 language pairs").
func Empty(t *tables.Table, name, mirrors, title, why, unit string) (Figure, error) {
	if why == "" {
		why = fmt.Sprintf("the table %s has no rows", t.Name)
	}
	o, err := json.Marshal(map[string]any{
		"animation": false,
		"title":     map[string]any{"text": title},
		"graphic": []any{map[string]any{"type": "text", "left": "center", "top": "middle",
			"style": map[string]any{"text": "Nothing to draw: " + wrapText(why, 90), "fontSize": 16, "lineHeight": 24, "fill": "#444", "textAlign": "center"}}},
	})
	if err != nil {
		return Figure{}, fmt.Errorf("figure %s: %w", name, err)
	}
	n := "n = 0 " + PluralOf(0, unit)
	return Of(t, name, mirrors, fmt.Sprintf("%s: nothing to draw: %s (%s)", title, why, n), n, o), nil
}
