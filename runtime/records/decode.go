package records

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/bhashalab/bhasha/runtime/engine"
)

// decodeLine decodes the record line raw into r (reset first), leaving
// empty what o leaves out (trim); with o.strict, only the members ScanDir
// reads, a missing key or status or an unknown status being an error.
func decodeLine(raw []byte, o StreamOptions, r *engine.Record) error {
	*r = engine.Record{}
	if o.strict {
		var rec struct {
			Key       *string          `json:"key"`
			Status    *string          `json:"status"`
			Digest    string           `json:"request_sha256"`
			Request   json.RawMessage  `json:"request"`
			Response  string           `json:"response"`
			Identity  *engine.Identity `json:"identity"`
			Simulated bool             `json:"simulated"`
		}
		err := json.Unmarshal(raw, &rec)
		switch {
		case err != nil:
			return err
		case rec.Key == nil:
			return errors.New(`field "key" is missing`)
		case rec.Status == nil:
			return errors.New(`field "status" is missing`)
		}
		*r = engine.Record{Key: *rec.Key, Status: *rec.Status, RequestSHA256: rec.Digest, Request: rec.Request,
			Response: rec.Response, Identity: rec.Identity, Simulated: rec.Simulated}
		return knownStatus(r.Status)
	}
	if err := json.Unmarshal(raw, r); err != nil {
		return err
	}
	trim(r, o)
	return nil
}

// knownStatus refuses a status that is neither ok nor failed.
func knownStatus(status string) error {
	if status != engine.StatusOK && status != engine.StatusFailed {
		return fmt.Errorf(`field "status": %q is neither "ok" nor "failed"`, status)
	}
	return nil
}

// trim empties the fields of r that o leaves out (decodeLine).
func trim(r *engine.Record, o StreamOptions) {
	if !o.WithRequests {
		r.Request = nil
	}
	if o.SkipExtracted {
		r.Extracted = nil
	}
	if o.SkipDigests {
		r.CacheKey, r.RequestSHA256 = "", ""
	}
	if o.TextsOnly {
		*r = engine.Record{Key: r.Key, Status: r.Status, Error: r.Error, Response: r.Response, Request: r.Request}
	}
}

// decoder decodes the JSON columns of a segment's rows; one goroutine's.
type decoder struct {
	identity []byte          // the identity column last decoded
	id       engine.Identity // and what it decoded to
}

// recordOf fills r from row's columns; its fields are the key's when keyed
// or when the fields column is the Writer's encoding of them.
func (dc *decoder) recordOf(row *segRow, keyed bool, r *engine.Record) error {
	*r = row.Record
	if keyed {
		if !keyOf(row.Key, nil, &r.Fields) {
			return fmt.Errorf("key %q: not the key of a fields column", row.Key)
		}
	} else if len(row.FieldsJSON) > 0 && !keyOf(row.Key, row.FieldsJSON, &r.Fields) {
		if err := json.Unmarshal(row.FieldsJSON, &r.Fields); err != nil {
			return fmt.Errorf("column fields: %w", err)
		}
	}
	if len(row.IdentityJSON) > 0 && string(row.IdentityJSON) != "null" {
		if !bytes.Equal(row.IdentityJSON, dc.identity) {
			dc.id = engine.Identity{}
			if err := json.Unmarshal(row.IdentityJSON, &dc.id); err != nil {
				dc.identity = nil
				return fmt.Errorf("column identity: %w", err)
			}
			dc.identity = append(dc.identity[:0], row.IdentityJSON...)
		}
		id := dc.id
		r.Identity = &id
	}
	if len(row.ExtractedJSON) > 0 {
		if err := json.Unmarshal(row.ExtractedJSON, &r.Extracted); err != nil {
			return fmt.Errorf("column extracted: %w", err)
		}
	}
	return nil
}

// keyFields are the members of engine.Key's JSON encoding, in order.
var keyFields = [...]string{"experiment", "model", "item", "language", "form", "strategy", "condition", "role"}

// keyOf sets k to the fields of key, without allocating, and reports true
// when fields is exactly the Writer's encoding of them (nil: any); false
// leaves k untouched.
func keyOf(key string, fields []byte, k *engine.Key) bool {
	var p [8]string
	rest := key
	for i := range p {
		var ok bool
		p[i], rest, ok = strings.Cut(rest, "|")
		if ok != (i < 7) || strings.IndexByte(p[i], '%') >= 0 {
			return false
		}
	}
	role, err := engine.ParseRole(p[7])
	if err != nil {
		return false
	}
	if fields != nil {
		f := fields
		eat := func(s string) bool {
			ok := len(f) >= len(s) && string(f[:len(s)]) == s
			if ok {
				f = f[len(s):]
			}
			return ok
		}
		if !eat("{") {
			return false
		}
		for i, v := range p {
			if (i >= 3 && i < 7 && v == "") || (i == 7 && role == engine.Role{}) {
				continue
			}
			if !plainJSON(v) || (i > 0 && !eat(",")) || !eat(`"`) || !eat(keyFields[i]) || !eat(`":"`) || !eat(v) || !eat(`"`) {
				return false
			}
		}
		if !eat("}") || len(f) > 0 {
			return false
		}
	}
	*k = engine.Key{Experiment: p[0], Model: p[1], Item: p[2], Language: p[3], Form: p[4], Strategy: p[5], Condition: p[6], Role: role}
	return true
}

// plainJSON reports whether encoding/json writes s between quotes as it is.
func plainJSON(s string) bool {
	ascii := true
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c == '"' || c == '\\':
			return false
		case c >= 0x80:
			ascii = false
		}
	}
	return ascii || (utf8.ValidString(s) && !strings.ContainsAny(s, "\u2028\u2029"))
}
