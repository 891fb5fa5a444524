// Package simtest starts the simulator for tests and benchmarks.
package simtest

import (
	"context"
	"testing"

	"github.com/bhashalab/bhasha/sim"
)

// Start serves a simulator with cfg on a free loopback port until the test
// ends, and returns its base URL (…/v1).
func Start(t testing.TB, cfg sim.Config) string {
	t.Helper()
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	url, err := s.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return url
}
