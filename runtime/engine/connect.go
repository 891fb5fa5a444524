package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
)

func (e *Engine) connect(ctx context.Context, mc ModelConfig, live bool) (*modelState, error) {
	if mc.Name == "" || mc.ServedName == "" {
		return nil, fmt.Errorf("model %q: name and served name are required", mc.Name)
	}
	if len(mc.Endpoints) == 0 {
		return nil, fmt.Errorf("model %q: no endpoints (name them in the experiment or with --endpoint; from Go, a run without endpoints uses the simulator)", mc.Name)
	}
	if live {
		if err := checkKeyLen(mc.APIKey, keyName(mc)); err != nil {
			return nil, fmt.Errorf("model %q: %w", mc.Name, err)
		}
	}
	mc.MaxConcurrency = cmp.Or(max(mc.MaxConcurrency, 0), 64)
	ms := &modelState{cfg: mc, key: newSecret(mc.APIKey), info: ModelInfo{Name: mc.Name, ServedName: mc.ServedName, MaxConcurrency: mc.MaxConcurrency}}
	var reps []*replica
	for _, ep := range mc.Endpoints {
		if err := CheckEndpoint(ep); err != nil {
			return nil, fmt.Errorf("model %q: %w", mc.Name, err)
		}
		reps = append(reps, newReplica(ep, mc.APIKey, e.client, mc.MaxConcurrency))
	}
	ms.pool = newPool(reps, &e.opts)
	ms.pool.model = mc.Name
	root := mc.Root
	if live {
		var unreachable, served, bases []string
		for _, r := range reps {
			bases = append(bases, r.base)
			models, err := listModels(ctx, r)
			if apiErr, ok := errors.AsType[*statusError](err); ok && (apiErr.Code == http.StatusUnauthorized || apiErr.Code == http.StatusForbidden) {
				why := keyName(mc) + " was refused"
				if mc.APIKey == "" {
					why = "the server wants an API key and none was sent; put it in an environment variable and name it with api_key_env"
				}
				return nil, fmt.Errorf("model %q: %s answered HTTP %d: %s", mc.Name, r.base, apiErr.Code, why)
			}
			si := ServerInfo{Endpoint: r.base, Models: models}
			if err != nil {
				si.Error = err.Error()
				r.dead = err
				r.backoffUntil = time.Now().Add(e.opts.ReplicaBackoffMax)
				unreachable = append(unreachable, fmt.Sprintf("%s: %v", r.base, err))
			} else {
				si.Version = serverVersion(ctx, r)
				r.answersAs = aliases(mc.ServedName, models)
			}
			ms.info.Servers = append(ms.info.Servers, si)
			for _, m := range models {
				served = append(served, m.ID)
				if m.ID == mc.ServedName {
					ms.simulated = ms.simulated || m.IsSimulated()
					root = cmp.Or(root, m.Root)
				}
			}
		}
		if len(unreachable) == len(reps) {
			return nil, fmt.Errorf("model %q: no endpoint is reachable:\n  %s", mc.Name, strings.Join(unreachable, "\n  "))
		}
		if !slices.Contains(served, mc.ServedName) {
			slices.Sort(served)
			return nil, fmt.Errorf("model %q: served name %q is not served at %s; served models: %s",
				mc.Name, mc.ServedName, strings.Join(bases, ", "), strings.Join(slices.Compact(served), ", "))
		}
		for _, u := range unreachable {
			e.opts.Logf("warning: model %q: endpoint unreachable, the other replicas carry on: %s", mc.Name, u)
		}
	}
	root = cmp.Or(root, mc.ServedName)
	// A replica that listed no entry for the served name (unreachable at
	// start) answers under any name another replica listed for it.
	all := map[string]bool{mc.ServedName: true, root: true}
	for _, r := range reps {
		maps.Copy(all, r.answersAs)
	}
	for _, r := range reps {
		if r.answersAs == nil {
			r.answersAs = all
		}
	}
	ms.info.Identity = Identity{ID: mc.ServedName, Root: root, Revision: mc.Revision}
	return ms, nil
}

// keyName names mc's API key by its variable, never by its value.
func keyName(mc ModelConfig) string {
	if mc.APIKeyEnv != "" {
		return fmt.Sprintf("the API key from $%s", mc.APIKeyEnv)
	}
	return "the API key"
}

// getJSON decodes the JSON body of GET url into v, within 10 s.
func getJSON(ctx context.Context, r *replica, url string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	raw, err := r.send(ctx, http.MethodGet, url, nil, nil)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("unparseable %s body: %w", url, err)
	}
	return nil
}

func listModels(ctx context.Context, r *replica) ([]ServedModel, error) {
	var out struct {
		Data []ServedModel `json:"data"`
	}
	if err := getJSON(ctx, r, r.base+"/models", &out); err != nil {
		return nil, fmt.Errorf("listing models: %w", err)
	}
	return out.Data, nil
}

func serverVersion(ctx context.Context, r *replica) string {
	var v struct {
		Version string `json:"version"`
	}
	if getJSON(ctx, r, r.root+"/version", &v) != nil {
		return ""
	}
	return v.Version
}

// ListServed asks the server at base (…/v1) which models it serves
// (GET /v1/models), with apiKey as the bearer token when not "" (a key
// shorter than MinAPIKeyLen is an error; one the server echoes is
// replaced by Redacted).
func ListServed(ctx context.Context, base, apiKey string) ([]ServedModel, error) {
	if err := CheckEndpoint(base); err != nil {
		return nil, err
	}
	if err := checkKeyLen(apiKey, "the API key"); err != nil {
		return nil, err
	}
	r := newReplica(base, apiKey, guardClient(nil, nil), 0)
	ms, err := listModels(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.base, err)
	}
	return ms, nil
}

// newReplica is the replica at ep (credentials stripped from its name)
// sending key (noAPIKey when "") through client, limit requests at once.
func newReplica(ep, key string, client *http.Client, limit int) *replica {
	base := strings.TrimRight(sanitizeURL(ep), "/")
	return &replica{base: base, root: strings.TrimSuffix(base, "/v1"), limit: float64(limit), maxLimit: float64(limit),
		client: client, key: cmp.Or(key, noAPIKey)}
}
