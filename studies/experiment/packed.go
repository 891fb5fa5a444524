package experiment

import (
	"hash/maphash"
	"sync"
	"unsafe"

	"github.com/bhashalab/bhasha/analysis/extract"
	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/runtime/engine"
)

// packed is a score.Row as a streamed pass holds it until the rows are
// put in order: each text as its number in the pass's table of texts,
// the flags as bits, a Detail as its index among the pass's details. It
// holds no pointer, so the collector does not scan the pass's blocks
// (a row has 14 pointers), and it is 104 bytes where a score.Row is 280.
// unpack(pack(r)) == r for every field of a score.Row.
type packed struct {
	text          [nTexts]uint32
	roleChoice    int32
	detail        int32 // index in the pass's details; -1: none
	promptTokens  int64
	offlineTokens int64
	latencyMS     float64
	marks         score.Marks
	roleKind      engine.RoleKind
	flags         uint8
}

// The texts of a row, by their index in packed.text.
const (
	tExperiment = iota
	tModel
	tItem
	tLanguage
	tForm
	tStrategy
	tCondition
	tRoleOf
	tDomain
	tGold
	tPrediction
	tMethod
	tVerdict
	tScript
	nTexts
)

// The flags of a row, by their bit in packed.flags.
const (
	fCorrect = 1 << iota
	fAbstain
	fSwitched
	fFailed
	fWithheld
	fCached
	fEmptyResponse
)

// texts numbers the texts of a pass's rows, from many goroutines: "" is
// 0, every other text the number it was first given. The table is
// sharded by the text's hash, so goroutines seldom wait on each other.
type texts struct {
	seed  maphash.Seed
	shard [textShards]struct {
		mu  sync.Mutex
		ids map[string]uint32
		_   [48]byte // a shard to a cache line (64 bytes)
	}
	mu  sync.Mutex // guards all
	all []string   // by number
}

const textShards = 32

// id is s's number, given now when s has none.
func (t *texts) id(s string) uint32 {
	if s == "" {
		return 0
	}
	sh := &t.shard[maphash.String(t.seed, s)%textShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if id, ok := sh.ids[s]; ok {
		return id
	}
	t.mu.Lock()
	id := uint32(len(t.all))
	t.all = append(t.all, s)
	t.mu.Unlock()
	sh.ids[s] = id
	return id
}

// packer packs rows for one goroutine at a time: it remembers the last
// text of each field, by the address of its bytes (which it keeps alive,
// so they cannot be another text's), since most fields repeat from one
// row to the next.
type packer struct {
	last [nTexts]struct {
		p  *byte
		n  int
		id uint32
	}
	// The goroutine's own blocks of its pass (pass.put), filled without
	// the pass's lock: rows is block rowsAt, n of its rows filled, and
	// kept likewise.
	pass          *pass
	rows          []packed
	rowsAt, rowsN int
	kept          []Kept
	keptAt, keptN int
}

func (pk *packer) text(t *texts, f int, s string) uint32 {
	if s == "" {
		return 0
	}
	l := &pk.last[f]
	if p := unsafe.StringData(s); p == l.p && len(s) == l.n {
		return l.id
	}
	id := t.id(s)
	l.p, l.n, l.id = unsafe.StringData(s), len(s), id
	return id
}

// pack is r packed; detail is the index its Detail has among the pass's
// (-1 when it has none).
func (pk *packer) pack(t *texts, r *score.Row, detail int32) packed {
	k := &r.Key
	f := flag(r.Correct, fCorrect) | flag(r.Abstain, fAbstain) | flag(r.Switched, fSwitched) | flag(r.Failed, fFailed) |
		flag(r.Withheld, fWithheld) | flag(r.Cached, fCached) | flag(r.EmptyResponse, fEmptyResponse)
	return packed{
		text: [nTexts]uint32{
			tExperiment: pk.text(t, tExperiment, k.Experiment),
			tModel:      pk.text(t, tModel, k.Model),
			tItem:       pk.text(t, tItem, k.Item),
			tLanguage:   pk.text(t, tLanguage, k.Language),
			tForm:       pk.text(t, tForm, k.Form),
			tStrategy:   pk.text(t, tStrategy, k.Strategy),
			tCondition:  pk.text(t, tCondition, k.Condition),
			tRoleOf:     pk.text(t, tRoleOf, k.Role.Of),
			tDomain:     pk.text(t, tDomain, r.Domain),
			tGold:       pk.text(t, tGold, r.Gold),
			tPrediction: pk.text(t, tPrediction, r.Prediction),
			tMethod:     pk.text(t, tMethod, string(r.Method)),
			tVerdict:    pk.text(t, tVerdict, r.Verdict),
			tScript:     pk.text(t, tScript, r.Script),
		},
		roleChoice:    k.Role.Choice,
		roleKind:      k.Role.Kind,
		detail:        detail,
		promptTokens:  int64(r.PromptTokens),
		offlineTokens: int64(r.OfflineTokens),
		latencyMS:     r.LatencyMS,
		marks:         r.Marks,
		flags:         f,
	}
}

// flag is bit when on, else 0.
func flag(on bool, bit uint8) uint8 {
	if on {
		return bit
	}
	return 0
}

// unpack is the row p packs; all are the pass's texts by number, details
// its details.
func unpack(p *packed, all []string, details []*score.Detail) score.Row {
	x := &p.text
	r := score.Row{
		Key: engine.Key{
			Experiment: all[x[tExperiment]], Model: all[x[tModel]], Item: all[x[tItem]],
			Language: all[x[tLanguage]], Form: all[x[tForm]], Strategy: all[x[tStrategy]],
			Condition: all[x[tCondition]],
			Role:      engine.Role{Of: all[x[tRoleOf]], Choice: p.roleChoice, Kind: p.roleKind},
		},
		Domain:        all[x[tDomain]],
		Gold:          all[x[tGold]],
		Prediction:    all[x[tPrediction]],
		Method:        extract.Method(all[x[tMethod]]),
		Verdict:       all[x[tVerdict]],
		Script:        all[x[tScript]],
		PromptTokens:  int(p.promptTokens),
		OfflineTokens: int(p.offlineTokens),
		LatencyMS:     p.latencyMS,
		Marks:         p.marks,
		Correct:       p.flags&fCorrect != 0,
		Abstain:       p.flags&fAbstain != 0,
		Switched:      p.flags&fSwitched != 0,
		Failed:        p.flags&fFailed != 0,
		Withheld:      p.flags&fWithheld != 0,
		Cached:        p.flags&fCached != 0,
		EmptyResponse: p.flags&fEmptyResponse != 0,
	}
	if p.detail >= 0 {
		r.Detail = details[p.detail]
	}
	return r
}
