package records

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/bhashalab/bhasha/runtime/engine"
)

// keyOf reads a row's fields from its key exactly when the fields column
// is the Writer's encoding of them; recordOf's fields are json.Unmarshal's
// of the column either way.
func TestKeyOf(t *testing.T) {
	for _, c := range []struct {
		name, key, fields string
		fast              bool
	}{
		{"every field", "e|m|1|hin|native|baseline|c|answer", `{"experiment":"e","model":"m","item":"1","language":"hin","form":"native","strategy":"baseline","condition":"c"}`, true},
		{"empty fields left out", "e|m|1|||||", `{"experiment":"e","model":"m","item":"1"}`, true},
		{"empty item kept", "e|m||||||", `{"experiment":"e","model":"m","item":""}`, true},
		{"judge role", "e|m|1|hin||||judge:big", `{"experiment":"e","model":"m","item":"1","language":"hin","role":"judge:big"}`, true},
		{"choice role", "e|m|1|||||choice:2", `{"experiment":"e","model":"m","item":"1","role":"choice:2"}`, true},
		{"non-ASCII", "e|m|अ|hin||||", `{"experiment":"e","model":"m","item":"अ","language":"hin"}`, true},
		{"escaped key", "e|m|a%7Cb|||||", `{"experiment":"e","model":"m","item":"a|b"}`, false},
		{"quote", `e|m|a"b|||||`, `{"experiment":"e","model":"m","item":"a\"b"}`, false},
		{"fields disagree", "e|m|1|||||", `{"experiment":"e","model":"m","item":"2"}`, false},
		{"other order", "e|m|1|||||", `{"model":"m","experiment":"e","item":"1"}`, false},
		{"white space", "e|m|1|||||", `{"experiment": "e","model":"m","item":"1"}`, false},
		{"role spelled otherwise", "e|m|1|||||choice:02", `{"experiment":"e","model":"m","item":"1","role":"choice:2"}`, false},
		{"too few parts", "e|m|1", `{"experiment":"e","model":"m","item":"1"}`, false},
		{"line separator", "e|m|a\u2028|||||", `{"experiment":"e","model":"m","item":"a\u2028"}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var want engine.Key
			if err := json.Unmarshal([]byte(c.fields), &want); err != nil {
				t.Fatal(err)
			}
			var dc decoder
			var k engine.Key
			if got := keyOf(c.key, []byte(c.fields), &k); got != c.fast || (got && k != want) {
				t.Errorf("keyOf = %v, %+v; want %v, %+v", got, k, c.fast, want)
			}
			var r engine.Record
			if err := dc.recordOf(&segRow{Record: engine.Record{Key: c.key}, FieldsJSON: []byte(c.fields)}, false, &r); err != nil || r.Fields != want {
				t.Errorf("recordOf: %+v, %v; want %+v", r.Fields, err, want)
			}
		})
	}
}

// A segment whose every fields column is the Writer's encoding of the
// key's fields says so (KeyFields), and is read without that column;
// either way a row group gives what encoding/json gives of its lines.
func TestSegmentKeyFields(t *testing.T) {
	rec := func(k engine.Key) engine.Record {
		return engine.Record{Key: k.String(), Fields: k, Status: engine.StatusOK, Response: "r"}
	}
	a := engine.Key{Experiment: "e", Model: "m", Item: "1", Language: "hin"}
	b := engine.Key{Experiment: "e", Model: "m", Item: "2", Role: engine.Judge("big")}
	odd := rec(a)
	odd.Fields.Item = "other"
	for _, c := range []struct {
		name  string
		recs  []engine.Record
		keyed bool
	}{
		{"fields of the keys", []engine.Record{rec(a), rec(b), rec(a)}, true},
		{"a fields column that disagrees", []engine.Record{rec(a), odd, rec(b)}, false},
		{"an escaped key", []engine.Record{rec(a), rec(engine.Key{Experiment: "e", Model: "m", Item: "x|y"})}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var lines [][]byte
			for _, r := range c.recs {
				w := newWriter(nopCloser{}, "x")
				if _, err := w.encode(&r); err != nil {
					t.Fatal(err)
				}
				lines = append(lines, bytes.TrimSuffix(w.buf.Bytes(), []byte("\n")))
			}
			p := filepath.Join(t.TempDir(), SegmentName(1))
			if err := writeSegment(p, "test", 2, func(add func([]byte) error) error {
				for _, l := range lines {
					if err := add(l); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			s, err := openSegment(p)
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			if s.digest.KeyFields != c.keyed || slices.Contains(s.columns(StreamOptions{}), "fields") == c.keyed {
				t.Fatalf("KeyFields %v, columns %v; want keyed %v", s.digest.KeyFields, s.columns(StreamOptions{}), c.keyed)
			}
			var got []engine.Record
			for g := range s.md.RowGroups {
				if _, _, err := s.decodeGroup(g, StreamOptions{}, new(decoder), nil, nil, func(_ int, r *engine.Record) error { got = append(got, *r); return nil }); err != nil {
					t.Fatal(err)
				}
			}
			for i, l := range lines {
				var want engine.Record
				if err := decodeLine(l, StreamOptions{}, &want); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got[i], want) {
					t.Errorf("line %d:\n got %+v\nwant %+v", i+1, got[i], want)
				}
			}
		})
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
	if err := decodeLine(raw, StreamOptions{WithRequests: true, TextsOnly: true}, &got); err != nil {
		t.Fatal(err)
	}
	want := engine.Record{Key: "e|m|1|||||", Status: "ok", Response: "रोम", Request: json.RawMessage(`{"prompt":"Q"}`)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}
