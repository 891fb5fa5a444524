package engine

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
)

// Bounds of a response body, so that a server that ignores max_tokens, or
// a connection that never ends, neither fills the memory nor writes a
// record line that the records reader refuses. A generation request's
// bound (responseBound) is
//
//	ResponseFloor + 2·len(body)
//	  + tokens · (BytesPerToken + logprobs)
//	  + promptTokens · BytesPerLogprob · (prompt_logprobs+1)
//
// where tokens is max_tokens (plus promptTokens with echo), logprobs is
// BytesPerLogprob·(top_logprobs+1) when logprobs are asked for (chat
// top_logprobs, completion logprobs) and 0 otherwise, and promptTokens is
// len(body)+4096; the whole is at most MaxResponseBytes, which also bounds
// a request without max_tokens and one that generates nothing.
const (
	// ResponseFloor is the least bound: any error page, any short answer.
	ResponseFloor = 1 << 20
	// BytesPerToken is the room given to one generated token: its text
	// JSON-escaped at worst (\u00XX per byte of a long token), and a
	// reasoning field beside the content.
	BytesPerToken = 128
	// BytesPerLogprob is the room given to one logprob entry (token, logprob,
	// bytes array, rank, decoded token).
	BytesPerLogprob = 256
	// MaxResponseBytes is the ceiling of every bound: half the records
	// reader's line limit (records.MaxRecordBytes, 64 MiB), leaving room for
	// the request body and the re-encoding of the answer in the record.
	MaxResponseBytes = 32 << 20
)

// bound is the most bytes a response body may have, and what it was
// computed from ("max_tokens 8, top_logprobs 5"), for the error.
type bound struct {
	limit int64
	what  string
}

// boundKey is the context key of the bound the guarded client applies.
type boundKey struct{}

func boundOf(ctx context.Context) bound {
	if b, ok := ctx.Value(boundKey{}).(bound); ok && b.limit > 0 {
		return b
	}
	return bound{limit: MaxResponseBytes}
}

// responseBound is the bound of the response to r, whose body (as
// Request.Body writes it) is bodyLen bytes long.
func responseBound(r Request, bodyLen int) bound {
	d := r.Decoding
	if d.MaxTokens <= 0 {
		return bound{limit: MaxResponseBytes, what: "max_tokens unset"}
	}
	clamp := func(v, hi int64) int64 { return min(max(v, 0), hi) }
	what := []string{fmt.Sprintf("max_tokens %d", d.MaxTokens)}
	promptTokens := int64(bodyLen) + 4096
	tokens := clamp(int64(d.MaxTokens), 1<<24)
	if d.Echo {
		tokens += promptTokens
		what = append(what, "echo")
	}
	perToken := int64(BytesPerToken)
	if d.Logprobs != nil {
		k := int64(*d.Logprobs)
		if r.Kind == Chat {
			what = append(what, fmt.Sprintf("top_logprobs %d", k))
		} else {
			what = append(what, fmt.Sprintf("logprobs %d", k))
		}
		perToken += BytesPerLogprob * (clamp(k, 1<<10) + 1)
	}
	limit := int64(ResponseFloor) + 2*int64(bodyLen) + tokens*perToken
	if p := d.PromptLogprobs; p != nil && *p >= 0 {
		limit += promptTokens * BytesPerLogprob * (clamp(int64(*p), 1<<10) + 1)
		what = append(what, fmt.Sprintf("prompt_logprobs %d", *p))
	}
	return bound{limit: min(limit, MaxResponseBytes), what: strings.Join(what, ", ")}
}

// refusal is an attempt error that classify does not retry: a body
// longer than its bound (tooLarge), in an encoding Bhasha did not ask for
// (encodingError), or a redirect.
type refusal string

func (e refusal) Error() string { return string(e) }

// tooLarge refuses a response body longer than b; declared is its
// Content-Length when that announced the excess, else 0.
func tooLarge(b bound, declared int64) refusal {
	s := fmt.Sprintf("the response body exceeded %d bytes", b.limit)
	if declared > 0 {
		s = fmt.Sprintf("the response body (Content-Length %d) exceeds %d bytes", declared, b.limit)
	}
	if b.what != "" {
		s += " for " + b.what
	}
	return refusal(s + "; the answer is not kept (a server that ignores max_tokens?)")
}

// encodingError refuses a body in Content-Encoding ce ("" for gzip's magic
// bytes without one).
func encodingError(ce string) refusal {
	switch {
	case ce == "":
		return "the body is gzip-compressed (it starts with gzip's magic bytes, without a Content-Encoding header), which Bhasha does not ask for"
	case strings.Contains(strings.ToLower(ce), "gzip"):
		return refusal(fmt.Sprintf("the body is gzip-compressed (Content-Encoding: %s), which Bhasha does not ask for", ce))
	}
	return refusal(fmt.Sprintf("the body is encoded (Content-Encoding: %s), which Bhasha does not ask for", ce))
}

// guardClient is c (http.DefaultClient when nil) behind guardTransport,
// following no redirect (one to another origin would carry the key away).
func guardClient(c *http.Client, unknown *atomic.Int64) *http.Client {
	cc := *cmp.Or(c, http.DefaultClient)
	cc.Transport = guardTransport{next: cmp.Or(cc.Transport, http.DefaultTransport), unknown: unknown}
	cc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		status := 0
		if req.Response != nil {
			status = req.Response.StatusCode
		}
		return refusal(fmt.Sprintf("the server redirected (HTTP %d) to %s; redirects are not followed: give the endpoint the server redirects to", status, sanitizeURL(req.URL.String())))
	}
	return &cc
}

type guardTransport struct {
	next    http.RoundTripper
	unknown *atomic.Int64 // responses of a simulator that did not know the item (SimHeader)
}

// SimHeader is the response header in which Bhasha's simulator says what
// it noticed about a request; SimUnknownItem, its value when the prompt
// matched none of the facts it knows (the answer is "I don't know").
const (
	SimHeader      = "X-Bhasha-Sim"
	SimUnknownItem = "unknown-item"
)

// RoundTrip refuses a Content-Encoding the request did not ask for, bounds
// the body, and replaces the request's bearer token in it by Redacted
// (guardBody): every byte of a server's answer the engine keeps passes here.
func (t guardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if ce := resp.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") && req.Header.Get("Accept-Encoding") == "" {
		resp.Body.Close()
		return nil, encodingError(ce)
	}
	if t.unknown != nil && resp.Header.Get(SimHeader) == SimUnknownItem {
		t.unknown.Add(1)
	}
	b := boundOf(req.Context())
	if resp.ContentLength > b.limit {
		resp.Body.Close()
		return nil, tooLarge(b, resp.ContentLength)
	}
	resp.Body = &guardBody{rc: resp.Body, b: b, s: bearerSecret(req)}
	return resp, nil
}

// guardBody fails a read past its bound or of a gzip body; with s set, the
// first Read reads the body whole and redacts the key (secret.body).
type guardBody struct {
	rc      io.ReadCloser
	b       bound
	s       *secret
	red     *bytes.Reader // the redacted body, once read
	n       int64
	started bool
	err     error // sticky
}

func (g *guardBody) Read(p []byte) (int, error) {
	if g.s != nil && g.err == nil {
		s := g.s
		g.s = nil // g reads the raw body from here on
		raw, err := io.ReadAll(g)
		if err == nil {
			if raw = s.body(raw); int64(len(raw)) > g.b.limit {
				err = tooLarge(g.b, 0)
			}
		}
		if err != nil {
			g.err = err
			return 0, err
		}
		g.red = bytes.NewReader(raw)
	}
	if g.red != nil {
		return g.red.Read(p)
	}
	if g.err != nil {
		return 0, g.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if room := g.b.limit - g.n + 1; int64(len(p)) > room {
		p = p[:room]
	}
	k, err := g.rc.Read(p)
	if !g.started && k > 0 {
		if p[0] == 0x1f && k == 1 && err == nil {
			k2, err2 := io.ReadFull(g.rc, p[1:min(2, len(p))])
			k, err = k+k2, err2
			if errors.Is(err, io.ErrUnexpectedEOF) {
				err = io.EOF
			}
		}
		g.started = true
		if k >= 2 && p[0] == 0x1f && p[1] == 0x8b {
			g.err = encodingError("")
			return 0, g.err
		}
	}
	g.n += int64(k)
	if g.n > g.b.limit {
		g.err = tooLarge(g.b, 0)
		return k, g.err
	}
	return k, err
}

func (g *guardBody) Close() error { return g.rc.Close() }
