package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/bhashalab/bhasha/internal/browsertest"
	"github.com/bhashalab/bhasha/sim"
)

// longAnswerServer is a loopback server that lists the simulator's
// models and answers every generation request with text, whatever the
// request's max_tokens (a server that ignores it, within the engine's
// bound of the response). It stops with the test.
func longAnswerServer(t *testing.T, text string) string {
	t.Helper()
	s, err := sim.New(sim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/completions") {
			s.ServeHTTP(w, r)
			return
		}
		var req struct{ Model string }
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "long", "object": "chat.completion", "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "length", "message": map[string]any{"role": "assistant", "content": text}}},
			"usage":   map[string]any{"prompt_tokens": 3, "completion_tokens": 10, "total_tokens": 13}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// `bhasha report --html --xlsx` on a run of 48 answers of about 900 KB
// each, to prompts of about 100 KB (in Devanagari, with markup): the HTML
// stays under the README's 25 MB, its explorer shows every answer, each
// long text cut on a grapheme boundary with a note saying how much was
// kept and where the full text is (the record's key for a prompt or a
// response); the workbook cuts its cells to Excel's limit with its mark;
// and the page renders in headless Chromium.
func TestReportOfLongAnswers(t *testing.T) {
	const unit = "क्षत्रिय नमस्ते <b>&\" हिन्दी "
	long := strings.Repeat(unit, 900_000/len(unit))
	url := longAnswerServer(t, long)
	dir := t.TempDir()
	var lines strings.Builder
	prompt := strings.Repeat("प्रश्न क्या है? ", 100_000/len("प्रश्न क्या है? "))
	for i := range 24 {
		b, _ := json.Marshal(map[string]any{"item": fmt.Sprintf("q%d", i), "language": "hin", "kind": "chat",
			"messages": []map[string]string{{"role": "user", "content": fmt.Sprint(i, prompt)}}})
		lines.Write(append(b, '\n'))
	}
	if err := os.WriteFile(filepath.Join(dir, "r.jsonl"), []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "exp.yaml")
	os.WriteFile(cfg, []byte("name: long\nrequests: r.jsonl\nmodels: [{name: tiny, served_name: sim-tiny-1b}, {name: base, served_name: sim-base-8b}]\ndecoding: {max_tokens: 10}\n"), 0o644)
	out := filepath.Join(dir, "run")
	var so, se bytes.Buffer
	if err := dispatch(context.Background(), []string{"run", "--config", cfg, "--out", out, "--cache-dir", filepath.Join(dir, "cache"), "--endpoint", url}, &so, &se); err != nil {
		t.Fatalf("run: %v\n%s", err, se.String())
	}
	html, xlsx := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.xlsx")
	if err := dispatch(context.Background(), []string{"report", "--run", out, "--html", html, "--xlsx", xlsx}, &so, &se); err != nil {
		t.Fatalf("report: %v\n%s", err, se.String())
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if len(page) >= 25_000_000 || !utf8.ValidString(page) {
		t.Fatalf("the HTML report is %d bytes (valid UTF-8: %v), want under the README's 25 MB", len(page), utf8.ValidString(page))
	}
	if !strings.Contains(page, "All 48 scored answers") {
		t.Error("the explorer does not show all 48 answers")
	}
	// kept is a cut text's kept part: a prefix of full ending on a
	// grapheme boundary.
	kept := func(what, got, full string) {
		t.Helper()
		k, _, ok := strings.Cut(got, " … [cut at ")
		next, _ := utf8.DecodeRuneInString(full[len(k):])
		last, _ := utf8.DecodeLastRuneInString(k)
		if !ok || !strings.HasPrefix(full, k) || unicode.In(next, unicode.Mn, unicode.Mc) || last == '्' {
			t.Errorf("%s: kept %q before %q, not a prefix of the full text ending a grapheme", what, k[max(0, len(k)-40):], full[len(k):min(len(full), len(k)+20)])
		}
	}
	cells := regexp.MustCompile(`<td>([^<]*?) … \[cut at (\d+) of (\d+) characters; the full text is in tables/answers.csv\]</td>`).FindAllStringSubmatch(page, -1)
	if len(cells) != 2*48 { // prediction, prediction_norm
		t.Errorf("%d table cells cut with a note naming tables/answers.csv, want %d", len(cells), 2*48)
	}
	i := strings.Index(page, `id="ex-data">`)
	j := strings.Index(page[max(i, 0):], "</script>")
	var ex struct {
		Columns []string
		Rows    [][]any
	}
	if i < 0 || j < 0 || json.Unmarshal([]byte(page[i+len(`id="ex-data">`):i+j]), &ex) != nil || len(ex.Rows) != 48 {
		t.Fatalf("the explorer's data: %d rows", len(ex.Rows))
	}
	col := func(name string) int {
		for c, n := range ex.Columns {
			if n == name {
				return c
			}
		}
		t.Fatalf("the explorer has no column %s", name)
		return -1
	}
	for _, row := range ex.Rows {
		key := fmt.Sprintf("record key long|%s|%s|hin||||]", row[col("model")], row[col("item")])
		resp, _ := row[col("response")].(string)
		if !strings.HasSuffix(resp, "of "+fmt.Sprint(utf8.RuneCountInString(long))+" characters; the full text is in the run's records (records.jsonl, or a sealed records-N.parquet), "+key) {
			t.Errorf("the explorer's response ends %q, want the note naming %s", resp[max(0, len(resp)-200):], key)
		}
		kept("response", resp, long)
		p, _ := row[col("prompt")].(string)
		if !strings.HasSuffix(p, key) {
			t.Errorf("the explorer's prompt ends %q, want the note naming %s", p[max(0, len(p)-200):], key)
		}
		kept("prompt", p, "user: "+strings.TrimPrefix(row[col("item")].(string), "q")+prompt)
	}

	t.Run("workbook", func(t *testing.T) {
		f, err := excelize.OpenFile(xlsx)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rows, err := f.GetRows("samples")
		if err != nil || len(rows) < 49 {
			t.Fatalf("samples sheet: %d rows, %v", len(rows), err)
		}
		cut := 0
		for _, r := range rows[1:] {
			for _, v := range r {
				if n := len(utf16.Encode([]rune(v))); n > 32767 {
					t.Fatalf("a cell of %d UTF-16 units, over Excel's 32,767", n)
				}
				if strings.HasSuffix(v, " characters, full text in records.jsonl]") {
					cut++
				}
			}
		}
		if cut != 2*48 { // the prompt and the response
			t.Errorf("%d cells of the samples sheet cut with the mark naming records.jsonl, want %d", cut, 2*48)
		}
	})

	t.Run("chromium", func(t *testing.T) {
		dom, console := browsertest.DumpDOM(t, browsertest.Chromium(t), html, 5*time.Second)
		if len(console) > 0 {
			t.Errorf("the page wrote to the console: %q", console)
		}
		if !strings.Contains(dom, "48 of 48 samples") || !strings.Contains(dom, "the full text is in tables/answers.csv]") {
			t.Errorf("the page did not render its explorer and tables: %.2000s", dom)
		}
	})
}
