package run

import (
	"iter"
	"slices"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/runtime/engine"
)

func noRequests(int, Lookup, func(engine.Key)) iter.Seq2[engine.Request, error] {
	return func(func(engine.Request, error) bool) {}
}

func TestJobCheck(t *testing.T) {
	cases := []struct {
		name string
		job  *Job
		want string // "" for a job that runs
	}{
		{"nil", nil, "no job"},
		{"unnamed", &Job{Stages: 1, Requests: noRequests}, "no experiment name"},
		{"no stage", &Job{Name: "x", Requests: noRequests}, "has no stage"},
		{"no requests", &Job{Name: "x", Stages: 1}, "has no requests"},
		{"runs", &Job{Name: "x", Stages: 2, Requests: noRequests}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.job.check()
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
		})
	}
}

// A run's endpoints and concurrency replace the job's for that run only.
func TestJobModelsOverride(t *testing.T) {
	j := &Job{Models: []engine.ModelConfig{
		{Name: "a", Endpoints: []string{"http://a/v1"}, MaxConcurrency: 4},
		{Name: "judge", Endpoints: []string{"http://j/v1"}},
	}}
	cases := []struct {
		name      string
		endpoints []string
		n         int
		wantEps   [][]string
		wantConc  []int
	}{
		{"none", nil, 0, [][]string{{"http://a/v1"}, {"http://j/v1"}}, []int{4, 0}},
		{"endpoints", []string{"http://sim/v1"}, 0, [][]string{{"http://sim/v1"}, {"http://sim/v1"}}, []int{4, 0}},
		{"concurrency", nil, 8, [][]string{{"http://a/v1"}, {"http://j/v1"}}, []int{8, 8}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ms := j.models(c.endpoints, c.n)
			for i, m := range ms {
				if !slices.Equal(m.Endpoints, c.wantEps[i]) || m.MaxConcurrency != c.wantConc[i] {
					t.Errorf("model %s: endpoints %v, concurrency %d; want %v, %d", m.Name, m.Endpoints, m.MaxConcurrency, c.wantEps[i], c.wantConc[i])
				}
			}
		})
	}
	if !slices.Equal(j.Models[0].Endpoints, []string{"http://a/v1"}) || j.Models[1].MaxConcurrency != 0 {
		t.Errorf("a run's override changed the job: %+v", j.Models)
	}
}
