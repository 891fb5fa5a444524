package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/openai/openai-go/v3/option"
)

// tokenizeKind marks token counts in the cache; they share the store with
// answers but never a key.
const tokenizeKind Kind = "tokenize"

// TokenCounts returns the number of tokens the served model's tokenizer
// gives each text, through the server's /tokenize (at the server root,
// not under /v1). Requests run concurrently within the model's limits and
// are cached like answers. addSpecial mirrors vLLM's add_special_tokens.
func (e *Engine) TokenCounts(ctx context.Context, model string, texts []string, addSpecial bool) ([]int, error) {
	ms, ok := e.models[model]
	if !ok {
		return nil, fmt.Errorf("tokenizing: model %q is not in the experiment", model)
	}
	out := make([]int, len(texts))
	errs := make([]error, len(texts))
	n := ms.cfg.MaxConcurrency * len(ms.pool.replicas)
	if e.maxInflight > 0 {
		n = min(n, e.maxInflight)
	}
	sem := make(chan struct{}, max(1, n))
	var wg sync.WaitGroup
	for i, t := range texts {
		body, err := json.Marshal(struct {
			Model      string `json:"model"`
			Prompt     string `json:"prompt"`
			AddSpecial bool   `json:"add_special_tokens"`
		}{ms.cfg.ServedName, t, addSpecial})
		if err != nil {
			return nil, fmt.Errorf("tokenizing text %d: %w", i, err)
		}
		key := CacheKey(ms.identity, tokenizeKind, body)
		if c := e.opts.Cache; c != nil && e.opts.ReadCache {
			if v, ok, _ := c.Get(key); ok {
				var r struct{ Count int }
				if json.Unmarshal(v, &r) == nil {
					out[i] = r.Count
					continue
				}
			}
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			n, err := ms.tokenize(ctx, body, &e.opts)
			if err != nil {
				errs[i] = fmt.Errorf("tokenizing text %d for %s: %w", i, model, err)
				return
			}
			out[i] = n
			if c := e.opts.Cache; c != nil {
				v, _ := json.Marshal(struct {
					Count int `json:"count"`
				}{n})
				if err := c.Put(key, v); err != nil {
					e.opts.Logf("warning: caching token count: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

func (ms *modelState) tokenize(ctx context.Context, body []byte, o *Options) (int, error) {
	var n int
	_, err := ms.retry(ctx, o, func(ctx context.Context, rep *replica) error {
		actx, cancel := context.WithTimeout(ctx, o.AttemptTimeout)
		defer cancel()
		var raw []byte
		if err := rep.client.Post(actx, "tokenize", body, &raw, option.WithBaseURL(rep.root+"/")); err != nil {
			return err
		}
		var r struct {
			Count *int `json:"count"`
		}
		if json.Unmarshal(raw, &r) != nil || r.Count == nil {
			return fmt.Errorf("%s/tokenize: %w: no count (body starts %q)", rep.base, errBadBody, prefix(raw, 60))
		}
		n = *r.Count
		return nil
	})
	return n, err
}
