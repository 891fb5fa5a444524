package triviaqa

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bhashalab/bhasha/datasets/item"
)

// writeOriginal writes a TriviaQA original-release JSON file (indented as
// the release is) of n records to dir and returns its path; edit may
// change the text of record i.
func writeOriginal(t testing.TB, dir string, n int, edit func(i int, rec string) string) string {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("{\n  \"Data\": [\n")
	for i := range n {
		rec := map[string]any{
			"Question":   fmt.Sprintf("Which river flows through city number %d of the list?", i),
			"QuestionId": fmt.Sprintf("tc_%d", i),
			"Answer": map[string]any{"Aliases": []string{fmt.Sprintf("River %d", i), fmt.Sprintf("river no. %d", i)},
				"NormalizedAliases": []string{fmt.Sprintf("river %d", i)}, "Value": fmt.Sprintf("River %d", i), "Type": "WikipediaEntity"},
			"EntityPages": []any{}, "SearchResults": []any{},
		}
		b, _ := json.MarshalIndent(rec, "    ", "  ")
		s := "    " + string(b)
		if edit != nil {
			s = edit(i, s)
		}
		sb.WriteString(s)
		if i < n-1 {
			sb.WriteString(",")
		}
		sb.WriteString("\n")
	}
	sb.WriteString("  ],\n  \"Domain\": \"Web\",\n  \"Version\": 1.0\n}\n")
	p := filepath.Join(dir, "tqa.json")
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOriginalStreamed(t *testing.T) {
	dir := t.TempDir()
	p := writeOriginal(t, dir, 500, nil)
	s, err := Load(context.Background(), p, item.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Items) != 500 || s.Items[499].ID != "tc_499" {
		t.Fatalf("%d items", len(s.Items))
	}
	v, _ := s.Items[7].Variant("eng", item.English)
	// Each record is 17 lines long and starts on line 3 + 17·i.
	if v.Source != fmt.Sprintf("%s:%d", p, 3+17*7) || v.Answer != "River 7" {
		t.Errorf("item 7: %+v", v)
	}
}

// Invalid UTF-8 (a record pasted from a Latin-1 file) is an error naming
// the line and field of the bad byte; skip_invalid skips and lists it.
func TestInvalidUTF8Named(t *testing.T) {
	dir := t.TempDir()
	p := writeOriginal(t, dir, 20, func(i int, rec string) string {
		if i == 5 {
			return strings.Replace(rec, "city number 5", "caf\xe9 number 5", 1)
		}
		return rec
	})
	_, err := Load(context.Background(), p, item.Options{})
	var pr item.Problem
	// Record 5 starts on line 3 + 17·5 = 88; its Question is its 14th line.
	if !errors.As(err, &pr) || pr.Field != "Question" || pr.Line != 88+13 || !strings.Contains(pr.Msg, "UTF-8") {
		t.Fatalf("%v (%+v)", err, pr)
	}
	s, err := Load(context.Background(), p, item.Options{SkipInvalid: true})
	if err != nil || len(s.Items) != 19 || len(s.Skipped) != 1 || s.Skipped[0].Record != "Data[5]" {
		t.Fatalf("%v: %d items, skipped %+v", err, len(s.Items), s.Skipped)
	}
	jl := filepath.Join(dir, "tqa.jsonl")
	os.WriteFile(jl, []byte(`{"context": "Question: Who?\nAnswer:", "answer": "A", "aliases": ["A"]}`+"\n"+
		"{\"context\": \"Question: Wh\xe9re?\\nAnswer:\", \"answer\": \"B\", \"aliases\": [\"B\"]}\n"), 0o644)
	_, err = Load(context.Background(), jl, item.Options{})
	if !errors.As(err, &pr) || pr.Line != 2 || pr.Field != "context" {
		t.Errorf("jsonl: %v", err)
	}
	os.WriteFile(jl, []byte("\xff\xfe{\x00\"\x00"), 0o644)
	_, err = Load(context.Background(), jl, item.Options{})
	if err == nil || !strings.Contains(err.Error(), "line 1") || !strings.Contains(err.Error(), "UTF-16") {
		t.Errorf("utf-16 jsonl: %v", err)
	}
}

func TestLoadCancelled(t *testing.T) {
	dir := t.TempDir()
	p := writeOriginal(t, dir, 5000, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	_, err := Load(ctx, p, item.Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled load: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("a cancelled load took %s", d)
	}
}

// BenchmarkOriginalJSON loads original-release files of about 2, 8 and 50
// MB (the quadratic loader took 1.6 s, 13.5 s and more than 10 minutes).
func BenchmarkOriginalJSON(b *testing.B) {
	for _, n := range []int{5000, 20000, 125000} {
		p := writeOriginal(b, b.TempDir(), n, nil)
		st, _ := os.Stat(p)
		b.Run(fmt.Sprintf("%dMB", st.Size()>>20), func(b *testing.B) {
			b.SetBytes(st.Size())
			for b.Loop() {
				s, err := Load(context.Background(), p, item.Options{})
				if err != nil || len(s.Items) != n {
					b.Fatal(err)
				}
			}
		})
	}
}
