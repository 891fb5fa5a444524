package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

type attemptInfo struct {
	n        int
	endpoint string
	latency  time.Duration
}

// do sends body until it succeeds, retrying what classify retries (at most
// o.MaxAttempts within o.RequestDeadline); errors name the last three.
func (ms *modelState) do(ctx context.Context, r Request, body []byte, o *Options) (Result, attemptInfo, error) {
	var info attemptInfo
	ctx, cancel := context.WithTimeout(ctx, o.RequestDeadline)
	defer cancel()
	var errs []string
	for {
		rep, err := ms.pool.acquire(ctx)
		if err != nil {
			return Result{}, info, deadlineErr(err, info, errs)
		}
		info.n++
		info.endpoint = rep.base
		start := time.Now()
		res, err := attempt(ctx, rep, ms.cfg.ServedName, r, body, o.AttemptTimeout)
		if err == nil {
			info.latency = time.Since(start)
			ms.pool.release(rep, outOK, 0, nil)
			return res, info, nil
		}
		retry, oc, after := classify(err)
		ms.pool.release(rep, oc, after, err)
		if ctx.Err() != nil {
			return Result{}, info, deadlineErr(ctx.Err(), info, append(errs, err.Error()))
		}
		errs = append(errs, err.Error())
		if !retry || info.n >= o.MaxAttempts {
			return Result{}, info, fmt.Errorf("after %d attempt(s): %s", info.n, lastErrs(errs))
		}
		select {
		case <-ctx.Done():
			return Result{}, info, deadlineErr(ctx.Err(), info, errs)
		case <-time.After(max(after, backoff(info.n, o.RetryBase, o.RetryMax))):
		}
	}
}

// deadlineErr is err when the run was cancelled, else the deadline's
// error naming the last three attempts' errors.
func deadlineErr(err error, info attemptInfo, errs []string) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	msg := fmt.Sprintf("request deadline exceeded after %d attempt(s)", info.n)
	if len(errs) > 0 {
		msg += ": " + lastErrs(errs)
	}
	return errors.New(msg)
}

// lastErrs joins the last three of errs.
func lastErrs(errs []string) string {
	return strings.Join(errs[max(len(errs)-3, 0):], "; ")
}

// backoff is min(max, base·2^(n-1)) scaled by a uniform factor in [0.5, 1).
func backoff(n int, base, maxD time.Duration) time.Duration {
	d := base << min(n-1, 20)
	if d > maxD || d <= 0 {
		d = maxD
	}
	return time.Duration(float64(d) * (0.5 + rand.Float64()/2))
}

// classify says whether err is retried (not a refusal, nor 4xx but
// 408, 409, 429), what it says of the replica, and the wait asked for.
func classify(err error) (retry bool, o outcome, after time.Duration) {
	if errors.As(err, new(refusal)) {
		return false, outRequest, 0
	}
	if errors.As(err, new(*wrongModelError)) {
		return true, outReplica, 0
	}
	if apiErr, ok := errors.AsType[*statusError](err); ok {
		after = retryAfter(apiErr.Header)
		switch c := apiErr.Code; {
		case c == http.StatusTooManyRequests:
			return true, outThrottled, after
		case c == http.StatusRequestTimeout || c >= 500:
			return true, outReplica, after
		case c == http.StatusConflict:
			return true, outRequest, after
		default:
			return false, outRequest, 0
		}
	}
	// Unparseable bodies, timeouts, connection resets, refused
	// connections, EOFs: the replica's fault.
	return true, outReplica, 0
}

// retryAfter reads retry-after-ms (milliseconds) or Retry-After (seconds or
// an HTTP date), capped at two minutes.
func retryAfter(h http.Header) time.Duration {
	const maxWait = 2 * time.Minute
	var d time.Duration
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			d = time.Duration(ms * float64(time.Millisecond))
		}
	} else if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
			d = time.Duration(s * float64(time.Second))
		} else if t, err := http.ParseTime(v); err == nil {
			d = time.Until(t)
		}
	}
	return min(max(d, 0), maxWait)
}
