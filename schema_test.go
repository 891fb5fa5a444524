package bhasha_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/examples/brevity"
)

// Each built-in study (and the example study, examples/brevity) run end to end on the
// simulator: answers.csv, the workbook's samples sheet and the HTML
// explorer's embedded fields carry the same columns, those of the study's
// answer schema (its own criteria and verdicts among them, declared
// once), and each Sample reads the same criteria by name.
func TestAnswerSchemaViews(t *testing.T) {
	lines := filepath.Join(t.TempDir(), "r.jsonl")
	if err := os.WriteFile(lines, []byte(`{"item": "1", "kind": "chat", "messages": [{"role": "user", "content": "Capital of France?"}]}
{"item": "2", "kind": "completion", "prompt": "The capital of India is"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		study string
		exp   *bhasha.Experiment
		own   []string // the study's own fields, in order
	}{
		{"indicklar", bhasha.IndicKLAR("testdata/indicklar/project_page_demo_hin_excerpt.json", bhasha.Languages("hin"), bhasha.SampleItems(3),
			bhasha.Strategies("baseline", "tint-cm")), []string{"relation", "correct", "authors_json", "lenient_json", "translit"}},
		{"indicquest", bhasha.IndicQuest("testdata/indicquest-v1", bhasha.Languages("en", "hi"), bhasha.SampleItems(2)),
			[]string{"domain", "correct", "judge", "substring", "overlap", "substring_alt", "overlap_alt", "translit"}},
		{"mdi", bhasha.Distractors("testdata/triviaqa/triviaqa_small.jsonl", bhasha.Conditions("clean", "hi"), bhasha.SampleItems(3)),
			[]string{"correct", "lenient", "squad_em", "translit", "semantic", "abstain_english", "abstain_multilingual", "abstain_rerun", "distractor_switch", "chosen"}},
		{"requests", bhasha.Requests(lines, bhasha.WithDecoding(bhasha.Decoding{MaxTokens: 8})), nil},
		{"brevity", bhasha.New("brevity", "testdata/triviaqa/triviaqa_small.jsonl", bhasha.Register(brevity.Study{}), bhasha.SampleItems(3)), []string{"correct", "brief"}},
	} {
		t.Run(tc.study, func(t *testing.T) {
			dir := t.TempDir()
			r, err := bhasha.Run(context.Background(), tc.exp, bhasha.Out(filepath.Join(dir, "run")), bhasha.CacheDir(filepath.Join(dir, "cache")))
			if err != nil {
				t.Fatal(err)
			}
			schema := r.Experiment().AnswerSchema()
			var own, all []string
			for _, f := range schema.Study() {
				own = append(own, f.Name)
			}
			for _, f := range schema.Fields() {
				all = append(all, f.Name)
			}
			if !slices.Equal(own, tc.own) {
				t.Errorf("schema's own fields %q, want %q", own, tc.own)
			}

			answers, err := r.Table("answers")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(answers.Header, all) {
				t.Errorf("answers.csv columns %q, want the schema's %q", answers.Header, all)
			}
			for _, c := range answers.Columns() {
				if c.Description == "" {
					t.Errorf("answers column %s has no description", c.Name)
				}
			}

			var wb bytes.Buffer
			if err := writeXLSX(r, &wb); err != nil {
				t.Fatal(err)
			}
			f, err := excelize.OpenReader(&wb)
			if err != nil {
				t.Fatal(err)
			}
			sheet, err := f.GetRows("samples")
			if err != nil || len(sheet) < 2 {
				t.Fatalf("samples sheet: %d rows, %v", len(sheet), err)
			}
			if !slices.Equal(sheet[0][:min(len(all), len(sheet[0]))], all) {
				t.Errorf("samples sheet header %q, want the schema's %q first", sheet[0], all)
			}

			var page bytes.Buffer
			if err := writeHTML(r, &page); err != nil {
				t.Fatal(err)
			}
			fields, err := explorerFields(page.String())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(fields, sheet[0]) {
				t.Errorf("explorer fields %q, samples sheet %q", fields, sheet[0])
			}

			ss, err := r.Samples()
			if err != nil || len(ss) != len(answers.Rows) {
				t.Fatalf("%d samples for %d answers: %v", len(ss), len(answers.Rows), err)
			}
			for i, s := range ss {
				for _, name := range schema.Criteria() {
					v, ok := s.Criterion(name)
					if want := answers.Rows[i][answers.Col(name)]; !ok || v != want {
						t.Errorf("sample %d: criterion %s = %v (%v), answers.csv %v", i, name, v, ok, want)
					}
				}
				if c, ok := s.Criterion("correct"); ok && c != s.Correct {
					t.Errorf("sample %d: Criterion(correct) %v, Correct %v", i, c, s.Correct)
				}
				for _, f := range schema.Study() {
					if v, ok := s.Value(f.Name); !ok || v != answers.Rows[i][answers.Col(f.Name)] {
						t.Errorf("sample %d: %s = %v (%v), answers.csv %v", i, f.Name, v, ok, answers.Rows[i][answers.Col(f.Name)])
					}
				}
				if _, ok := s.Criterion("no_such_criterion"); ok {
					t.Errorf("sample %d has a criterion its study does not declare", i)
				}
			}
		})
	}
}

// explorerFields reads the names of the fields the HTML report's explorer
// embeds.
func explorerFields(page string) ([]string, error) {
	const open = `id="ex-data">`
	i := strings.Index(page, open)
	if i < 0 {
		return nil, fmt.Errorf("no explorer data in the page")
	}
	j := strings.Index(page[i:], "</script>")
	var data struct {
		Columns []string `json:"columns"`
		Fields  []struct {
			Name string `json:"name"`
		} `json:"fields"`
	}
	if err := json.Unmarshal([]byte(page[i+len(open):i+j]), &data); err != nil {
		return nil, fmt.Errorf("explorer data: %w", err)
	}
	var out []string
	for k, f := range data.Fields {
		if k >= len(data.Columns) || data.Columns[k] != f.Name {
			return nil, fmt.Errorf("explorer field %d (%s) is not column %d", k, f.Name, k)
		}
		out = append(out, f.Name)
	}
	return out, nil
}
