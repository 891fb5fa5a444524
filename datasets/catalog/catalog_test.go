package catalog

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/lang"
)

func TestDetectAndLoad(t *testing.T) {
	cases := []struct {
		path  string
		want  Format
		items int
	}{
		{"../../testdata/klar", KLAR, 46},
		{"../../testdata/indicklar/demo_samples_excerpt.json", IndicKLARSamples, 3},
		{"../../testdata/indicklar/project_page_demo_hin_excerpt.json", IndicKLARPage, 24},
		{"../../testdata/bmlama/BMLAMA53", BMLAMA, 40},
		{"../../testdata/indicquest-v1", IndicQuest, 15},
		{"../../testdata/triviaqa/triviaqa_sample.json", TriviaQA, 1},
		{"../../testdata/triviaqa/triviaqa_small.jsonl", TriviaQA, 32},
		{"../../testdata/parquet/triviaqa-validation-sample.parquet", TriviaQA, 4},
		{"../../testdata/truthfulqa/mc_task.json", TruthfulQA, 12},
		{"../../testdata/parquet/truthfulqa-mc-validation-sample.parquet", TruthfulQA, 5},
	}
	reg := lang.New()
	for _, c := range cases {
		f, err := Detect(c.path)
		if err != nil || f != c.want {
			t.Errorf("%s: detected %q %v, want %q", c.path, f, err, c.want)
			continue
		}
		s, got, err := Load(context.Background(), c.path, "", reg, nil, item.Options{})
		if err != nil || got != c.want || len(s.Items) != c.items {
			t.Errorf("%s: %v %s, %d items, want %d", c.path, err, got, len(s.Items), c.items)
		}
	}
}

func TestDetectErrors(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "rel.json"), []byte(`{"name": "capital", "prompt_templates": []}`), 0o644)
	os.WriteFile(filepath.Join(dir, "odd.json"), []byte(`{"zzz": 1}`), 0o644)
	cases := []struct{ path, want string }{
		{filepath.Join(dir, "rel.json"), "point at the root"},
		{filepath.Join(dir, "odd.json"), `key "zzz"`},
		{filepath.Join(dir, "missing"), "no such file"},
		{"../../testdata/indicquest-v1/Hindi.csv", "point at the directory"},
		{dir, "no dataset layout recognised"},
	}
	for _, c := range cases {
		if _, err := Detect(c.path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.path, err, c.want)
		}
	}
	if _, err := ParseFormat("klr"); err == nil || !strings.Contains(err.Error(), "klar") {
		t.Errorf("ParseFormat: %v", err)
	}
}
