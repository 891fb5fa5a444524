// Package bpe counts tokens offline with a Hugging Face tokenizer.json of
// the BPE kind: byte-level BPE with a regex pre-tokenizer (Llama 3, Qwen)
// and SentencePiece-style BPE with byte fallback (Gemma). It implements
// what counting needs, as the tokenizers library does: added tokens
// matched first, the normalizer (NFC, Replace), the pre-tokenizers
// (Split by regex or string, ByteLevel), and BPE merges applied lowest
// rank first, leftmost first among equal ranks, with ignore_merges and
// byte_fallback. Encode returns the ids of a text without special tokens.
package bpe

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"golang.org/x/text/unicode/norm"
)

// Tokenizer is a loaded tokenizer.json.
type Tokenizer struct {
	vocab        map[string]int
	ranks        map[[2]string]int
	ignoreMerges bool
	byteFallback bool
	unk          int // -1 when none
	nfc          bool
	replace      [2]string // normalizer Replace: from → to ("" when none)
	split        *regexp2.Regexp
	splitString  string // Split by a literal string (MergedWithPrevious)
	byteLevel    bool
	added        []added // longest first
}

type added struct {
	content string
	id      int
}

type rawPattern struct {
	Regex  *string `json:"Regex"`
	String *string `json:"String"`
}

type rawStep struct {
	Type          string     `json:"type"`
	Pattern       rawPattern `json:"pattern"`
	Content       string     `json:"content"`
	Behavior      string     `json:"behavior"`
	Pretokenizers []rawStep  `json:"pretokenizers"`
	Normalizers   []rawStep  `json:"normalizers"`
	UseRegex      bool       `json:"use_regex"`
	AddPrefix     bool       `json:"add_prefix_space"`
}

type rawFile struct {
	AddedTokens []struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
	} `json:"added_tokens"`
	Normalizer   *rawStep `json:"normalizer"`
	PreTokenizer *rawStep `json:"pre_tokenizer"`
	Model        struct {
		Type         string          `json:"type"`
		Vocab        map[string]int  `json:"vocab"`
		Merges       json.RawMessage `json:"merges"`
		IgnoreMerges bool            `json:"ignore_merges"`
		ByteFallback bool            `json:"byte_fallback"`
		UnkToken     *string         `json:"unk_token"`
	} `json:"model"`
}

// Load reads a tokenizer.json; unsupported parts are errors naming the file.
func Load(path string) (*Tokenizer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading tokenizer: %w", err)
	}
	var f rawFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Model.Type != "BPE" {
		return nil, fmt.Errorf("%s: model type %q is not supported (want BPE)", path, f.Model.Type)
	}
	t := &Tokenizer{vocab: f.Model.Vocab, ranks: map[[2]string]int{}, ignoreMerges: f.Model.IgnoreMerges, byteFallback: f.Model.ByteFallback, unk: -1}
	if f.Model.UnkToken != nil {
		if id, ok := t.vocab[*f.Model.UnkToken]; ok {
			t.unk = id
		}
	}
	var merges []json.RawMessage
	if err := json.Unmarshal(f.Model.Merges, &merges); err != nil {
		return nil, fmt.Errorf("%s: model.merges: %w", path, err)
	}
	for i, m := range merges {
		var pair [2]string
		var s string
		if json.Unmarshal(m, &s) == nil {
			a, b, ok := strings.Cut(s, " ")
			if !ok {
				return nil, fmt.Errorf("%s: model.merges[%d]: %q is not \"a b\"", path, i, s)
			}
			pair = [2]string{a, b}
		} else if err := json.Unmarshal(m, &pair); err != nil {
			return nil, fmt.Errorf("%s: model.merges[%d]: %w", path, i, err)
		}
		if _, dup := t.ranks[pair]; !dup {
			t.ranks[pair] = i
		}
	}
	for _, a := range f.AddedTokens {
		t.added = append(t.added, added{a.Content, a.ID})
	}
	sort.SliceStable(t.added, func(i, j int) bool { return len(t.added[i].content) > len(t.added[j].content) })
	if err := t.normalizer(f.Normalizer, path); err != nil {
		return nil, err
	}
	if err := t.preTokenizer(f.PreTokenizer, path); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *Tokenizer) normalizer(n *rawStep, path string) error {
	if n == nil {
		return nil
	}
	switch n.Type {
	case "NFC":
		t.nfc = true
	case "Replace":
		if n.Pattern.String == nil {
			return fmt.Errorf("%s: normalizer Replace with a regex is not supported", path)
		}
		t.replace = [2]string{*n.Pattern.String, n.Content}
	case "Sequence":
		for i := range n.Normalizers {
			if err := t.normalizer(&n.Normalizers[i], path); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("%s: normalizer %q is not supported", path, n.Type)
	}
	return nil
}

func (t *Tokenizer) preTokenizer(p *rawStep, path string) error {
	if p == nil {
		return nil
	}
	switch p.Type {
	case "Sequence":
		for i := range p.Pretokenizers {
			if err := t.preTokenizer(&p.Pretokenizers[i], path); err != nil {
				return err
			}
		}
	case "Split":
		switch {
		case p.Pattern.Regex != nil:
			if p.Behavior != "Isolated" {
				return fmt.Errorf("%s: Split behaviour %q with a regex is not supported", path, p.Behavior)
			}
			re, err := regexp2.Compile(*p.Pattern.Regex, regexp2.Unicode)
			if err != nil {
				return fmt.Errorf("%s: pre-tokenizer regex: %w", path, err)
			}
			t.split = re
		case p.Pattern.String != nil:
			t.splitString = *p.Pattern.String
		}
	case "ByteLevel":
		if p.UseRegex || p.AddPrefix {
			return fmt.Errorf("%s: ByteLevel with use_regex or add_prefix_space is not supported", path)
		}
		t.byteLevel = true
	default:
		return fmt.Errorf("%s: pre-tokenizer %q is not supported", path, p.Type)
	}
	return nil
}

// Count is len(Encode(s)).
func (t *Tokenizer) Count(s string) (int, error) {
	ids, err := t.Encode(s)
	return len(ids), err
}

// Encode returns the token ids of s (no special tokens added).
func (t *Tokenizer) Encode(s string) ([]int, error) {
	var ids []int
	for _, seg := range t.splitAdded(s) {
		if seg.id >= 0 {
			ids = append(ids, seg.id)
			continue
		}
		text := seg.text
		if t.nfc {
			text = norm.NFC.String(text)
		}
		if t.replace[0] != "" {
			text = strings.ReplaceAll(text, t.replace[0], t.replace[1])
		}
		pieces, err := t.pretokenize(text)
		if err != nil {
			return nil, err
		}
		for _, p := range pieces {
			ids = append(ids, t.word(p)...)
		}
	}
	return ids, nil
}

type segment struct {
	text string
	id   int
}

// splitAdded cuts s around added tokens (longest first at each position).
func (t *Tokenizer) splitAdded(s string) []segment {
	if len(t.added) == 0 {
		return []segment{{s, -1}}
	}
	var out []segment
	start := 0
	for i := 0; i < len(s); {
		k := slices.IndexFunc(t.added, func(a added) bool { return a.content != "" && strings.HasPrefix(s[i:], a.content) })
		if k < 0 {
			_, n := utf8.DecodeRuneInString(s[i:])
			i += n
			continue
		}
		if i > start {
			out = append(out, segment{s[start:i], -1})
		}
		out = append(out, segment{"", t.added[k].id})
		i += len(t.added[k].content)
		start = i
	}
	if start < len(s) {
		out = append(out, segment{s[start:], -1})
	}
	return out
}

func (t *Tokenizer) pretokenize(s string) ([]string, error) {
	var pieces []string
	switch {
	case t.split != nil:
		m, err := t.split.FindStringMatch(s)
		last := 0
		runes := []rune(s)
		for err == nil && m != nil {
			// regexp2 reports rune indices.
			if m.Index > last {
				pieces = append(pieces, string(runes[last:m.Index]))
			}
			pieces = append(pieces, m.String())
			last = m.Index + m.Length
			m, err = t.split.FindNextMatch(m)
		}
		if err != nil {
			return nil, fmt.Errorf("tokenizing: %w", err)
		}
		if last < len(runes) {
			pieces = append(pieces, string(runes[last:]))
		}
	case t.splitString != "":
		pieces = strings.SplitAfter(s, t.splitString) // an empty last piece has no token
	default:
		pieces = []string{s}
	}
	if t.byteLevel {
		for i, p := range pieces {
			var sb strings.Builder
			for _, c := range []byte(p) {
				sb.WriteRune(byteRune[c])
			}
			pieces[i] = sb.String()
		}
	}
	return pieces, nil
}

// byteRune is GPT-2's bytes_to_unicode: printable bytes map to themselves,
// the others to U+0100 onwards.
var byteRune = func() [256]rune {
	var m [256]rune
	n := 0
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			m[b] = rune(b)
		} else {
			m[b] = rune(256 + n)
			n++
		}
	}
	return m
}()

// word runs BPE over one pre-tokenized piece (each step merges the
// adjacent pair of lowest rank, the leftmost among equal ranks) and maps
// the symbols to ids.
func (t *Tokenizer) word(w string) []int {
	if w == "" {
		return nil
	}
	if t.ignoreMerges {
		if id, ok := t.vocab[w]; ok {
			return []int{id}
		}
	}
	var sym []string
	for _, r := range w {
		sym = append(sym, string(r))
	}
	for {
		best, at := 0, -1
		for i := 0; i+1 < len(sym); i++ {
			if r, ok := t.ranks[[2]string{sym[i], sym[i+1]}]; ok && (at < 0 || r < best) {
				best, at = r, i
			}
		}
		if at < 0 {
			break
		}
		sym[at] += sym[at+1]
		sym = slices.Delete(sym, at+1, at+2)
	}
	var ids []int
	for _, s := range sym {
		if id, ok := t.vocab[s]; ok {
			ids = append(ids, id)
			continue
		}
		if t.byteFallback {
			for _, c := range []byte(s) {
				if id, ok := t.vocab[fmt.Sprintf("<0x%02X>", c)]; ok {
					ids = append(ids, id)
				}
			}
			continue
		}
		if t.unk >= 0 {
			ids = append(ids, t.unk)
		}
	}
	return ids
}
