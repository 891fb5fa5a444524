// Package jsonlist reads the records of a JSON list one at a time, each
// with its place (file, line, record) for the loaders' problems.
package jsonlist

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/internal/jsonpos"
)

// Each reads the records of the JSON list whose '[' dec has just read, up
// to and including its ']'. Each record is decoded into a new T and given
// to add with src, its place: path, its first line and list[i]. A record
// that is not valid UTF-8 (the line and key of its first bad byte) or
// does not decode into T is recorded with s.Fail instead, with its place
// and the reason. A list that cannot be read is an item.Problem at the
// line the decoder reached. lines maps a byte offset, never less than the
// one before, to its line. ctx is checked every 1,024 records.
func Each[T any](ctx context.Context, dec *json.Decoder, path string, lines func(int64) int, list string,
	s *item.Set, opts item.Options, add func(r *T, src item.Problem) error) error {
	var buf [64]byte
	for i := 0; dec.More(); i++ {
		if i%1024 == 0 && ctx.Err() != nil {
			return fmt.Errorf("reading %s: %w", path, ctx.Err())
		}
		name := string(append(strconv.AppendInt(append(append(buf[:0], list...), '['), int64(i), 10), ']')) // list[i], one allocation
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return item.Problem{File: path, Line: lines(dec.InputOffset()), Record: name, Msg: err.Error()}
		}
		start := dec.InputOffset() - int64(len(raw))
		src := item.Problem{File: path, Line: lines(start), Record: name}
		r, p := Decode[T](raw, src, start, lines)
		err := error(nil)
		if p != nil {
			err = s.Fail(opts, *p)
		} else {
			err = add(&r, src)
		}
		if err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return item.Problem{File: path, Line: lines(dec.InputOffset()), Msg: err.Error()}
	}
	return nil
}

// Decode decodes raw, found at byte offset start of src's file, into a T;
// the problem at src is non-nil when raw is not valid UTF-8 (the line and
// key of its first bad byte) or does not decode into T.
func Decode[T any](raw []byte, src item.Problem, start int64, lines func(int64) int) (T, *item.Problem) {
	var r T
	if p, bad := jsonpos.InvalidUTF8(src, raw, start, lines); bad {
		return r, &p
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		src.Msg = err.Error()
		return r, &src
	}
	return r, nil
}
