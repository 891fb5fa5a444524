package cli

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/bhashalab/bhasha/runtime/cache"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
)

// echoedKey is the API key of echoServer's run: '/', '+' and '=' are
// written otherwise by URL encoding, '/' may be by JSON.
const echoedKey = "sk-cli/Echo+Key=7001"

// echoedForms are the spellings of echoedKey that must be found nowhere.
var echoedForms = []string{echoedKey, url.QueryEscape(echoedKey), url.PathEscape(echoedKey), strings.ReplaceAll(echoedKey, "/", `\/`)}

// echoReply is how echoServer answers one generation request, and what
// the run must record of it. In body, KEY stands for the bearer token the
// server received and ANSWER for the kind's answer object ("message":
// {...} for chat, "text" for a completion) holding the text that follows.
type echoReply struct {
	name   string
	status int
	body   string
	ok     bool // the record is ok ([REDACTED] in its response) or failed (in its error)
}

// Retried failures (5xx, a 200 that is no answer) alternate with answers,
// so that no replica fault follows three others of another request: the
// back-off each request's three faults bring is the shortest (1 s).
var echoReplies = []echoReply{
	{"500 plain text", 500, `rejected credentials 'Bearer KEY' (` + url.QueryEscape(echoedKey) + `)`, false},
	{"200 answer with the key", 200, `ANSWER the key is KEY`, true},
	{"500 older vLLM message", 500, `{"object":"error","message":"rejected credentials 'Bearer KEY'","type":"InternalServerError","code":500}`, false},
	{"200 answer with the key escaped", 200, `ANSWER escaped ` + jsonEscapeBytes(echoedKey) + ` and ` + strings.ReplaceAll(echoedKey, "/", `\/`), true},
	{"200 with an error object", 200, `{"error":{"message":"invalid credentials Bearer KEY","type":"invalid_request_error","code":401}}`, false},
	{"200 answer with the key URL-encoded", 200, `ANSWER see /auth?key=` + url.QueryEscape(echoedKey), true},
	{"200 not JSON", 200, `Bearer KEY is not allowed here`, false},
	{"401 OpenAI error object", 401, `{"error":{"message":"rejected credentials 'Bearer KEY'","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, false},
}

// jsonEscapeBytes writes every byte of s as a JSON \u00XX escape.
func jsonEscapeBytes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, `\u%04x`, s[i])
	}
	return b.String()
}

// echoServer serves echo-model: /v1/models and /version echo the bearer
// token they receive, and each distinct request body is answered as the
// next echoReply, in the order the bodies first arrive (every attempt of a
// body the same way); replyOf says which reply a body got.
func echoServer(t *testing.T) (base string, replyOf func(body []byte) (echoReply, bool)) {
	t.Helper()
	var mu sync.Mutex
	got := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		switch r.URL.Path {
		case "/v1/models":
			io.WriteString(w, `{"object":"list","data":[{"id":"echo-model","root":"/models/echo-7b","owned_by":"key `+key+`"}]}`)
			return
		case "/version":
			io.WriteString(w, `{"version":"0.0.1+`+key+`"}`)
			return
		}
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		i, seen := got[string(b)]
		if !seen {
			i = len(got) % len(echoReplies)
			got[string(b)] = i
		}
		mu.Unlock()
		rep := echoReplies[i]
		body := rep.body
		if text, ok := strings.CutPrefix(body, "ANSWER "); ok {
			answer := `"text":"` + text + `"`
			if strings.HasSuffix(r.URL.Path, "/chat/completions") {
				answer = `"message":{"role":"assistant","content":"` + text + `","reasoning_content":"they sent Bearer KEY"}`
			}
			body = `{"model":"echo-model","choices":[{"index":0,"finish_reason":"stop",` + answer + `}],"usage":{"prompt_tokens":3,"completion_tokens":4}}`
		}
		w.WriteHeader(rep.status)
		io.WriteString(w, strings.ReplaceAll(body, "KEY", key))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", func(body []byte) (echoReply, bool) {
		mu.Lock()
		defer mu.Unlock()
		i, ok := got[string(body)]
		return echoReplies[i], ok
	}
}

// readable is the contents of the file at p, and, when it is compressed
// (zstd, gzip or zip, by its magic bytes), its contents decompressed.
func readable(t *testing.T, p string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	out := [][]byte{b}
	switch {
	case strings.HasPrefix(filepath.Base(p), "records-") && strings.HasSuffix(p, ".parquet"):
		// A sealed segment: its records, as the run's readers read them.
		if err := records.Read(filepath.Dir(p), func(r *engine.Record) error {
			line, err := json.Marshal(r)
			out = append(out, line)
			return err
		}); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	case bytes.HasPrefix(b, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		d, err := zstd.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		defer d.Close()
		plain, err := io.ReadAll(d)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, plain)
	case bytes.HasPrefix(b, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, plain)
	case bytes.HasPrefix(b, []byte("PK\x03\x04")):
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatalf("%s: %s: %v", p, f.Name, err)
			}
			plain, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatalf("%s: %s: %v", p, f.Name, err)
			}
			out = append(out, plain)
		}
	}
	return out
}

// `bhasha run` against a server that echoes the API key (named by
// api_key_env) in 401 and 500 bodies, in a 200's error object or non-JSON
// body, in /v1/models and /version, and in answers as sent, JSON-escaped
// and URL-encoded, then `bhasha report` on the run: the key is in no file
// of the run directory (segments and workbooks decompressed) nor of the
// cache, nor in the output or any error; [REDACTED] stands where it was.
// Each request's record keeps the body sent and its digest.
func TestEchoedAPIKeyNeverStored(t *testing.T) {
	t.Setenv("BHASHA_ECHO_KEY", echoedKey)
	ep, replyOf := echoServer(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "exp.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`name: echotest
synthetic: {count: %d}
models:
  - {name: echo, served_name: echo-model, endpoints: ["http://127.0.0.1:1/v1"], api_key_env: BHASHA_ECHO_KEY, max_concurrency: 1}
decoding: {max_tokens: 8}
engine: {max_attempts: 3, retry_base: 1ms, retry_max: 1ms}
`, len(echoReplies))), 0o644)
	out, cdir := filepath.Join(dir, "run"), filepath.Join(dir, "cache")
	var so, se bytes.Buffer
	var errs []string
	runErr := dispatch(context.Background(), []string{"run", "--config", cfg, "--out", out, "--cache-dir", cdir, "--endpoint", ep}, &so, &se)
	if code := ExitCode(context.Background(), runErr); code != exitIncomplete {
		t.Fatalf("run: exit %d (%v), want %d (some requests failed)\n%s", code, runErr, exitIncomplete, se.String())
	}
	errs = append(errs, runErr.Error())
	if !strings.Contains(se.String(), engine.Redacted) {
		t.Errorf("the run's log says nothing of the echoed key (a back-off names the 500's body):\n%s", se.String())
	}

	seen := map[string]bool{}
	if err := records.Read(out, func(r *engine.Record) error {
		rep, ok := replyOf(r.Request)
		if !ok {
			return fmt.Errorf("record %s: its request was never sent", r.Key)
		}
		seen[rep.name] = true
		where := r.Error
		if rep.ok {
			where = r.Response
		}
		if (r.Status == engine.StatusOK) != rep.ok || !strings.Contains(where, engine.Redacted) {
			t.Errorf("%s: status %s, error %q, response %q: want ok %v and %s", rep.name, r.Status, r.Error, r.Response, rep.ok, engine.Redacted)
		}
		if engine.RequestDigest(r.Request) != r.RequestSHA256 {
			t.Errorf("%s: request_sha256 %s is not the digest of the request sent", rep.name, r.RequestSHA256)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != len(echoReplies) {
		t.Errorf("records of %d replies, want %d: %v", len(seen), len(echoReplies), seen)
	}

	// Seal the records into a Parquet segment, as a long run
	// does, and report on the run: every file it makes is searched too.
	sealNow(t, out)
	rep := filepath.Join(dir, "report")
	if err := os.MkdirAll(rep, 0o755); err != nil {
		t.Fatal(err)
	}
	err := dispatch(context.Background(), []string{"report", "--run", out, "--cache-dir", cdir,
		"--html", filepath.Join(rep, "report.html"), "--xlsx", filepath.Join(rep, "report.xlsx")}, &so, &se)
	if err != nil {
		errs = append(errs, err.Error())
		t.Errorf("report: %v", err)
	}

	for _, e := range errs {
		for _, f := range echoedForms {
			if strings.Contains(e, f) {
				t.Errorf("an error holds the key (%s): %s", f, e)
			}
		}
	}
	for _, f := range echoedForms {
		if strings.Contains(so.String()+se.String(), f) {
			t.Errorf("stdout or stderr holds the key (%s)", f)
		}
	}
	var files []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if !d.Type().IsRegular() || p == cfg {
			return nil
		}
		files = append(files, strings.TrimPrefix(p, dir))
		for _, b := range readable(t, p) {
			for _, f := range echoedForms {
				if bytes.Contains(b, []byte(f)) {
					t.Errorf("%s holds the key (%s)", p, f)
				}
			}
		}
		return nil
	})
	if m, _ := os.ReadFile(filepath.Join(out, "manifest.json")); !bytes.Contains(m, []byte("key "+engine.Redacted)) {
		t.Errorf("the manifest does not show the echoed owned_by redacted:\n%s", m)
	}
	if segs, _ := filepath.Glob(filepath.Join(out, "records-*.parquet")); len(segs) == 0 {
		t.Errorf("no sealed segment was searched")
	}
	if _, err := os.Stat(filepath.Join(cdir, cache.FileName)); err != nil {
		t.Errorf("no cache was searched: %v", err)
	}
	t.Logf("files searched: %s", files)
}
