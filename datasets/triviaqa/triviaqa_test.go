package triviaqa

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/datasets/item"
)

func TestLoadFormats(t *testing.T) {
	cases := []struct {
		path                string
		n                   int
		id, question, value string
		alias               string
	}{
		{"../../testdata/parquet/triviaqa-validation-sample.parquet", 4, "tc_33", "Which Lloyd Webber musical premiered in the US on 10th December 1993?", "Sunset Boulevard", "west sunset boulevard"},
		{"../../testdata/triviaqa/triviaqa_sample.json", 1, "tc_33", "Which Lloyd Webber musical premiered in the US on 10th December 1993?", "Sunset Boulevard", "Sunset Blvd."},
		{"../../testdata/triviaqa/triviaqa_small.jsonl", 32, "1", "Who was the man behind The Chipmunks?", "David Seville", ""},
	}
	for _, c := range cases {
		s, err := Load(context.Background(), c.path, item.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Items) != c.n {
			t.Errorf("%s: %d items, want %d", c.path, len(s.Items), c.n)
			continue
		}
		it := s.Items[0]
		v, ok := it.Variant("eng", item.English)
		if !ok || it.ID != c.id || v.Question != c.question || v.Answer != c.value {
			t.Errorf("%s: first item %s %+v", c.path, it.ID, v)
		}
		if c.alias != "" && !slices.Contains(v.Aliases, c.alias) {
			t.Errorf("%s: aliases %q lack %q", c.path, v.Aliases, c.alias)
		}
		if slices.Contains(v.Aliases, v.Answer) {
			t.Errorf("%s: the value is repeated among the aliases", c.path)
		}
	}
	// The parquet rows carry their aliases (a LIST column with "item" children).
	s, _ := Load(context.Background(), "../../testdata/parquet/triviaqa-validation-sample.parquet", item.Options{})
	v, _ := s.Items[3].Variant("eng", item.English)
	if v.Answer != "Campbell-Bannerman" || len(v.Aliases) < 5 {
		t.Errorf("row 3 %+v", v)
	}
}

func TestBadRecords(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "q.jsonl")
	os.WriteFile(p, []byte(`{"context": "Question: A?\nAnswer:", "answer": "a", "aliases": []}
{"context": "Question: B?\nAnswer:", "aliases": ["b"]}
not json
`), 0o644)
	_, err := Load(context.Background(), p, item.Options{})
	if err == nil || !strings.Contains(err.Error(), "q.jsonl line 2 field \"answer.value\": empty") {
		t.Fatalf("error %v", err)
	}
	s, err := Load(context.Background(), p, item.Options{SkipInvalid: true})
	if err != nil || len(s.Items) != 1 || len(s.Skipped) != 2 || s.Skipped[1].Line != 3 {
		t.Fatalf("%v %+v", err, s)
	}
	if _, err := Load(context.Background(), filepath.Join(dir, "x.csv"), item.Options{}); err == nil {
		t.Error("unknown extension accepted")
	}
	bad := filepath.Join(dir, "bad.parquet")
	os.WriteFile(bad, []byte("not parquet"), 0o644)
	if _, err := Load(context.Background(), bad, item.Options{}); err == nil || !strings.Contains(err.Error(), "bad.parquet") {
		t.Errorf("bad parquet: %v", err)
	}
}
