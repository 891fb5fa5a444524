package records

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/bhashalab/bhasha/analysis/extract"
	"github.com/bhashalab/bhasha/runtime/engine"
)

// str reads a record's string members as encoding/json does (escapes:
// internal/jsonscan's tests), interned or not, null as "".
func TestStr(t *testing.T) {
	in := new(interner)
	for _, c := range []struct{ v, want string }{
		{`"hin"`, "hin"}, {`"hin"`, "hin"}, {`"{\"a\":\"\u0905\"}"`, `{"a":"अ"}`}, {`null`, ""}, {`""`, ""},
	} {
		for _, in := range []*interner{nil, in} {
			if got, err := str([]byte(c.v), in); err != nil || got != c.want {
				t.Errorf("str(%s) = %q, %v; want %q", c.v, got, err, c.want)
			}
		}
	}
	for _, bad := range []string{`"\x"`, `12`, `"a`} {
		if _, err := str([]byte(bad), nil); err == nil {
			t.Errorf("str(%s): no error", bad)
		}
	}
}

// TestDecodeSealedAgreesWithUnmarshal: the fast decoder gives every field
// encoding/json gives, for records as the Writer writes them.
func TestDecodeSealedAgreesWithUnmarshal(t *testing.T) {
	recs := []engine.Record{
		{Key: "e|m|1|hin|native|baseline||", Fields: engine.Key{Experiment: "e", Model: "m", Item: "1", Language: "hin", Form: "native", Strategy: "baseline"},
			Kind: engine.Completion, Status: engine.StatusOK, Response: "{\"answer\":\"पेरिस\"}\n", PromptTokens: 12, LatencyMS: 3.25, Cached: true,
			Request: json.RawMessage(`{"prompt":"Q: \u0905?\nA:"}`), RequestSHA256: "ab", CacheKey: "ck", Identity: &engine.Identity{ID: "m", Root: "r"}, Simulated: true,
			Extracted: &extract.Result{Value: "पेरिस", Method: extract.MethodJSON}},
		{Key: "e|m|2|||||", Status: "failed", Error: "HTTP 500: \"boom\"", Attempts: 3, Logprobs: json.RawMessage(`[{"t":"a"}]`), EmptyResponse: true},
	}
	for _, want := range recs {
		var out closingBuffer
		w := newWriter(&out, "records.jsonl")
		if err := w.Write(&want); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		written := bytes.TrimSuffix(out.Bytes(), []byte("\n"))
		// The same record rewritten by another tool (members in
		// alphabetical order, the request among them) and sealed again.
		var m map[string]any
		json.Unmarshal(written, &m)
		delete(m, "record_sha256")
		var other bytes.Buffer
		b, _ := json.Marshal(m)
		other.Write(append(b, '\n'))
		seal(&other, 0)
		for _, raw := range [][]byte{written, bytes.TrimSuffix(other.Bytes(), []byte("\n"))} {
			if checkSeal(raw) != sealOK {
				t.Fatalf("%s: not sealed", want.Key)
			}
			var ref engine.Record
			if err := json.Unmarshal(raw, &ref); err != nil {
				t.Fatal(err)
			}
			// What the options leave out is left empty, the rest as
			// encoding/json gives it.
			for _, o := range []StreamOptions{{}, {WithRequests: true}, {SkipDigests: true}, {WithRequests: true, SkipExtracted: true}, {TextsOnly: true}, {WithRequests: true, TextsOnly: true}} {
				var got engine.Record
				if err := decodeSealed(raw, o, new(interner), &got); err != nil {
					t.Fatalf("%s: %v", want.Key, err)
				}
				exp := ref
				if !o.WithRequests {
					exp.Request = nil
				}
				if o.SkipDigests {
					exp.CacheKey, exp.RequestSHA256 = "", ""
				}
				if o.SkipExtracted {
					exp.Extracted = nil
				}
				if o.TextsOnly {
					exp = engine.Record{Key: exp.Key, Status: exp.Status, Error: exp.Error, Response: exp.Response, Request: exp.Request}
				}
				if !reflect.DeepEqual(got, exp) {
					t.Errorf("%s (%+v):\n got %+v\nwant %+v", want.Key, o, got, exp)
				}
			}
		}
	}
}

type closingBuffer struct{ bytes.Buffer }

func (*closingBuffer) Close() error { return nil }

// A line without a seal (written by hand, or by an older writer) is read
// through encoding/json; TextsOnly leaves empty what it leaves empty on a
// sealed line.
func TestDecodeLineTextsOnlyUnsealed(t *testing.T) {
	raw := []byte(`{"key":"e|m|1|||||","fields":{"experiment":"e","model":"m","item":"1"},"status":"ok","response":"रोम","error":"","served_model":"s","latency_ms":4,"request":{"prompt":"Q"}}`)
	var got engine.Record
	if _, err := decodeLine(raw, unsealed, StreamOptions{WithRequests: true, TextsOnly: true}, new(interner), nil, &got); err != nil {
		t.Fatal(err)
	}
	want := engine.Record{Key: "e|m|1|||||", Status: "ok", Response: "रोम", Request: json.RawMessage(`{"prompt":"Q"}`)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// decodeExtracted gives what encoding/json gives of every shape of an
// extracted result.
func TestDecodeExtractedAgreesWithUnmarshal(t *testing.T) {
	for _, v := range []string{
		`{"value":"v","method":"json"}`,
		`{"value":"v\u00e9\n","method":"json","fields":{"translation":"t \"q\"","b":""},"fallback":"{\"t\":1}"}`,
		`{"value":"","method":"unparsed","null":true,"note":"n","numbers":{"score":0.25,"n":-3e2},"in_candidates":false}`,
		`{"value":"v","method":"json","fields":null,"numbers":null,"in_candidates":null}`,
		`{"value":"v","method":"json","fields":{"a\u0062":"x"}}`,
		`{"value":"v","method":"json","fields":{"a":"x","a":"y"}}`,
		`{"value":"v","method":"json","other":[1,2]}`,
		`{"value":"v","method":"json","fields":{"a":1}}`,
	} {
		var want *extract.Result
		werr := json.Unmarshal([]byte(v), &want)
		got, err := decodeExtracted([]byte(v), new(interner))
		if (err != nil) != (werr != nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v (%v)\nwant %+v (%v)", v, got, err, want, werr)
		}
	}
}

// decodeExtracted beside encoding/json, on an answer's typical result.
func BenchmarkDecodeExtracted(b *testing.B) {
	v := []byte(`{"value":"What is the instrument of Putenucup Roculi? The answer is:","method":"json","fields":{"translation":"What is the instrument of Putenucup Roculi? The answer is:"},"fallback":"{\"translation\":\"What is the instrument of Putenucup Roculi? The answer is:\"}"}`)
	b.Run("decodeExtracted", func(b *testing.B) {
		in := new(interner)
		for range b.N {
			if _, err := decodeExtracted(v, in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for range b.N {
			var x *extract.Result
			if err := json.Unmarshal(v, &x); err != nil {
				b.Fatal(err)
			}
		}
	})
}
