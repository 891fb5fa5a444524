package kernel

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha"
)

// stopped runs f and returns the error a cell helper stopped with
// (outside a notebook Stop panics with it), or nil.
func stopped(f func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			e, ok := v.(error)
			if !ok {
				panic(v)
			}
			err = e
		}
	}()
	f()
	return nil
}

func TestErrorHTMLEscapes(t *testing.T) {
	h := ErrorHTML("opening <run>", errors.New(`a "<script>alert(1)</script>" & more`))
	for _, w := range []string{"opening &lt;run&gt; failed", "&lt;script&gt;alert(1)&lt;/script&gt;", "&amp; more", "#D55E00"} {
		if !strings.Contains(h, w) {
			t.Errorf("%s lacks %q", h, w)
		}
	}
	if strings.Contains(h, "<script>") {
		t.Errorf("%s holds a live script", h)
	}
}

// Outside a notebook the cell helpers panic with what failed (in a cell
// they show it and end the program), and pass through when nothing does.
func TestCellHelpersStopOnFailure(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	exp := bhasha.Distractors("../testdata/triviaqa/triviaqa_small.jsonl", bhasha.Conditions("clean", "hi"), bhasha.SampleItems(3))
	var r *bhasha.Results
	if err := stopped(func() { r = Run(exp, run, bhasha.CacheDir(filepath.Join(dir, "cache"))) }); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := stopped(func() { Show(Open(run), "accuracy"); Draw(Open(run), "conditions") }); err != nil {
		t.Fatalf("Open, Show, Draw: %v", err)
	}
	if err := stopped(func() { Save(r, dir) }); err != nil {
		t.Fatalf("Save: %v", err)
	}
	for _, f := range []string{"report.html", "report.xlsx"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("Save wrote no %s: %v", f, err)
		}
	}
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"open a folder that is no run", func() { Open(dir) }, "opening the run " + dir},
		{"a table the run lacks", func() { Show(r, "no_such_table") }, "showing tables"},
		{"a pattern matching no figure", func() { Draw(r, "no_such_figure") }, `no figure of the run matches ["no_such_figure"]`},
		{"an experiment that does not validate", func() { Run(bhasha.Distractors(filepath.Join(dir, "missing.jsonl")), filepath.Join(dir, "bad")) }, "running"},
		{"Check with an error", func() { Check("reading", context.Canceled) }, "reading: context canceled"},
	} {
		err := stopped(tc.f)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: stopped with %v, want %q", tc.name, err, tc.want)
		}
	}
	if err := stopped(func() { Check("nothing", nil) }); err != nil {
		t.Errorf("Check(nil) stopped: %v", err)
	}
}

// The red box of a failure lists the cause first: an experiment naming a
// study the program did not register shows the unknown study before the
// study's own options, which follow from it as unknown keys.
func TestErrorHTMLListsTheCauseFirst(t *testing.T) {
	for _, c := range []struct{ name, yaml string }{
		{"options before the study", "name: x\nanswer_tokens: 12\nbrief_words: 1\nstudy: brevity\nmodels: [{name: m, served_name: M}]\n"},
		{"options after the study", "name: x\nstudy: brevity\nbrief_words: 1\nmodels: [{name: m, served_name: M}]\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := bhasha.Parse(context.Background(), []byte(c.yaml))
			if err == nil {
				t.Fatal("an unregistered study loaded")
			}
			h := ErrorHTML("loading the experiment", err)
			study, key := strings.Index(h, "unknown study &#34;brevity&#34;"), strings.Index(h, "unknown key &#34;brief_words&#34;")
			if study < 0 || key < 0 || study > key {
				t.Errorf("the unknown study (at %d) is not listed before the unknown key it causes (at %d):\n%s", study, key, h)
			}
		})
	}
}
