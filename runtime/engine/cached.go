package engine

import (
	"encoding/json"
	"fmt"

	"github.com/bhashalab/bhasha/runtime/cache"
)

// Cached returns the answer cached under key. An entry that does not
// decode, or is not a valid answer (Result.Valid: an empty text that was
// never checked to be a real empty answer), is reported as absent with an
// error saying why, so that the request is sent again.
func Cached(c *cache.Store, key [32]byte) (Result, bool, error) {
	v, ok, err := c.Get(key)
	if err != nil || !ok {
		return Result{}, false, err
	}
	res, _, ok, err := decodeEntry(key, v)
	return res, ok, err
}

// cacheEntry is what the cache holds of an answer: the Result, and the
// engine that stored it (Engine.runID), so that an answer cached earlier
// in the same run is told apart from one of an earlier run.
type cacheEntry struct {
	Result
	Run uint64 `json:"run,omitempty"`
}

// decodeEntry reads the cache entry v of key, with the run that stored it (0 when unknown).
func decodeEntry(key [32]byte, v []byte) (Result, uint64, bool, error) {
	var ce cacheEntry
	if err := json.Unmarshal(v, &ce); err != nil {
		return Result{}, 0, false, fmt.Errorf("cache entry %s does not decode: %w", HexKey(key), err)
	}
	if !ce.Result.Valid() {
		return Result{}, 0, false, fmt.Errorf("cache entry %s holds an empty answer that was never checked", HexKey(key))
	}
	return ce.Result, ce.Run, true, nil
}
