package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// CutText leaves a text of at most its limit as it is, and cuts a longer
// one to at most the limit, note included, on a character boundary and
// never inside a grapheme: the note says how many characters of how many
// were kept and where the full text is, and cutting again changes
// nothing.
func TestCutText(t *testing.T) {
	const where = "tables/answers.csv"
	for _, c := range []struct {
		name, in string
		limit    int
		cut      bool
		kept     string // the text kept, when cut
	}{
		{"empty", "", 200, false, ""},
		{"at the limit", strings.Repeat("न", 100), 200, false, ""},
		{"ascii", strings.Repeat("x", 1000), 200, true, strings.Repeat("x", 200-len([]rune(" … [cut at 200 of 1000 characters; the full text is in tables/answers.csv]")))},
		// क्ष is क, virama, ष: a cut between virama and ष would show a
		// dangling half-form; कि is क and a vowel sign.
		{"conjunct", strings.Repeat("क्ष", 400), 200, true, ""},
		{"vowel sign", strings.Repeat("कि", 600), 200, true, ""},
		{"nukta and anusvara", strings.Repeat("ज़ं", 400), 200, true, ""},
		{"zero-width joiner", strings.Repeat("क्\u200dष", 300), 200, true, ""},
		{"emoji modifier", strings.Repeat("👍🏽", 600), 200, true, ""},
		{"crlf", strings.Repeat("a\r\n", 400), 200, true, ""},
		{"bengali and tamil", strings.Repeat("ক্ষত্রিয় கொண்டு ", 100), 200, true, ""},
		{"invalid UTF-8", strings.Repeat("a\xff", 600), 200, true, ""},
		{"marks only", strings.Repeat("\u0301", 600), 200, true, ""},
		{"long where", strings.Repeat("x", 1000), 200, true, ""},
	} {
		w := where
		if c.name == "long where" {
			w = strings.Repeat("w", 200)
		}
		got := CutText(c.in, c.limit, w)
		if !c.cut {
			if got != c.in {
				t.Errorf("%s: changed to %q", c.name, got)
			}
			continue
		}
		m := regexp.MustCompile(` … \[cut at (\d+) of (\d+) characters(; the full text is in (.*))?\]$`).FindStringSubmatch(got)
		if m == nil {
			t.Errorf("%s: no cut note at the end of %q", c.name, got)
			continue
		}
		kept := strings.TrimSuffix(got, m[0])
		if m[1] != fmt.Sprint(utf8.RuneCountInString(kept)) || m[2] != fmt.Sprint(utf8.RuneCountInString(c.in)) {
			t.Errorf("%s: note %q for %d of %d characters", c.name, m[0], utf8.RuneCountInString(kept), utf8.RuneCountInString(c.in))
		}
		if c.name == "long where" {
			if m[3] != "" {
				t.Errorf("%s: a note of %d characters within a limit of %d", c.name, utf8.RuneCountInString(m[0]), c.limit)
			}
		} else if m[4] != w {
			t.Errorf("%s: the note names %q, want %q", c.name, m[4], w)
		}
		if n := utf8.RuneCountInString(got); n > c.limit || n < c.limit/4 {
			t.Errorf("%s: %d characters, want at most %d (and not much fewer)", c.name, n, c.limit)
		}
		if !strings.HasPrefix(c.in, kept) || utf8.ValidString(c.in) && !utf8.ValidString(got) {
			t.Errorf("%s: %q is not a prefix of the text cut on a character boundary", c.name, kept)
		}
		if c.kept != "" && kept != c.kept {
			t.Errorf("%s: kept %q, want %q", c.name, kept, c.kept)
		}
		if again := CutText(got, c.limit, w); again != got {
			t.Errorf("%s: cut again to %q", c.name, again)
		}
	}
}

// No cut point splits a grapheme of an Indic script: wherever the cut
// falls in a Devanagari text, the text kept ends neither in a virama nor
// before a mark that belongs to its last letter.
func TestCutPointKeepsGraphemes(t *testing.T) {
	s := "क्षत्रिय स्त्री ज़िंदगी श्रीमान् क्\u200dष हिन्दी"
	runes := []rune(s)
	for n := 1; n < len(runes); n++ {
		i := cutPoint(s, n)
		if i > len(string(runes[:n])) || !utf8.ValidString(s[:i]) {
			t.Fatalf("cut after %d characters at byte %d", n, i)
		}
		if i == 0 {
			continue
		}
		last, _ := utf8.DecodeLastRuneInString(s[:i])
		next, _ := utf8.DecodeRuneInString(s[i:])
		if unicode.In(next, unicode.Mn, unicode.Mc) || next == '\u200d' || isVirama(last) && unicode.IsLetter(next) || last == '\u200d' {
			t.Errorf("cut after %d characters splits %q | %q", n, s[:i], s[i:])
		}
	}
}

// The HTML page cuts a table's long cells and the explorer's long texts,
// each with its note naming where the full text is, so that the explorer
// shows every sample, however long, and the page stays small.
func TestHTMLCutsLongTexts(t *testing.T) {
	long := strings.Repeat("नमस्ते <b>&\" ", 80_000) // 1 MB
	answers := tables.New("answers", "", tables.Text("model", ""), tables.Text("prediction", ""))
	samples := tables.New("samples", "", tables.Text("model", ""), tables.Text("prediction", ""),
		tables.Text("prompt", ""), tables.Text("response", ""), tables.Text("error", ""))
	for range 48 {
		answers.Rows = append(answers.Rows, []any{"m", long})
		samples.Rows = append(samples.Rows, []any{"m", long, long, long, long})
	}
	// another table's text is cut at MaxTableText: a rule's description
	// of 600 characters is shown whole
	rule, label := strings.Repeat("r", 600), strings.Repeat("ल", 5000)
	scoring := tables.New("scoring", "", tables.Text("rule", ""))
	scoring.Rows = [][]any{{rule}, {label}}
	var b bytes.Buffer
	if err := WriteHTML(&b, Page{Title: "long", Tables: []*tables.Table{answers, scoring}, Samples: samples}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if !utf8.ValidString(page) {
		t.Error("the page is not UTF-8")
	}
	// 48 rows of one cell of MaxAnswerText characters, 48 samples of four
	// texts of MaxSampleText, each character at most 6 bytes, beside
	// ECharts.
	if bound := len(echartsJS) + 6*48*(MaxAnswerText+4*MaxSampleText) + 64<<10; len(page) > bound {
		t.Errorf("page of %d bytes, want at most %d", len(page), bound)
	}
	cell := "[cut at 1"
	if n := strings.Count(page, cell); n != 48 {
		t.Errorf("%d table cells say %q, want 48", n, cell)
	}
	if !strings.Contains(page, "of 1040000 characters; the full text is in tables/answers.csv]") {
		t.Error("no table cell says where its full text is")
	}
	if !strings.Contains(page, "<td>"+rule+"</td>") || !strings.Contains(page, "<td>"+label[:3*(MaxTableText-80)]) ||
		!strings.Contains(page, " … [cut at 925 of 5000 characters; the full text is in tables/scoring.csv]</td>") {
		t.Error("the scoring table's texts are not shown whole within MaxTableText, and cut past it")
	}
	i := strings.Index(page, `id="ex-data">`)
	j := strings.Index(page[i:], "</script>")
	var ex explorer
	if i < 0 || j < 0 || json.Unmarshal([]byte(page[i+len(`id="ex-data">`):i+j]), &ex) != nil {
		t.Fatal("no explorer data")
	}
	if len(ex.Rows) != 48 {
		t.Errorf("the explorer shows %d of 48 samples", len(ex.Rows))
	}
	for c, want := range map[int]string{1: "tables/answers.csv]", 2: "sealed records-N.parquet)]", 3: "sealed records-N.parquet)]", 4: "sealed records-N.parquet)]"} {
		s, _ := ex.Rows[0][c].(string)
		if utf8.RuneCountInString(s) > MaxSampleText || !strings.HasSuffix(s, want) {
			t.Errorf("the explorer's %s: %d characters ending %q, want at most %d ending %q", ex.Columns[c], utf8.RuneCountInString(s), s[max(0, len(s)-120):], MaxSampleText, want)
		}
	}
	if samples.Rows[0][2] != long {
		t.Error("the page changed the samples it was given")
	}
}
