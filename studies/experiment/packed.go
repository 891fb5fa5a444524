package experiment

import (
	"hash/maphash"
	"sync"
	"unsafe"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/runtime/engine"
)

// packed is a score.Row without pointers: texts by number in the pass's
// texts, flags as bits, Detail by index; unpack(pack(r)) == r.
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

// nTexts is the number of texts of a row (rowTexts).
const nTexts = 14

// rowTexts are r's texts, by their index in packed.text.
func rowTexts(r *score.Row) [nTexts]*string {
	k := &r.Key
	return [nTexts]*string{&k.Experiment, &k.Model, &k.Item, &k.Language, &k.Form, &k.Strategy, &k.Condition, &k.Role.Of,
		&r.Domain, &r.Gold, &r.Prediction, (*string)(&r.Method), &r.Verdict, &r.Script}
}

// rowFlags are r's flags, by their bit in packed.flags.
func rowFlags(r *score.Row) [7]*bool {
	return [7]*bool{&r.Correct, &r.Abstain, &r.Switched, &r.Failed, &r.Withheld, &r.Cached, &r.EmptyResponse}
}

// texts numbers the texts of a pass's rows ("" is 0), sharded by hash.
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

// packer packs rows for one goroutine, remembering each field's last
// text by the address of its bytes.
type packer struct {
	last [nTexts]struct {
		p  *byte
		n  int
		id uint32
	}
	pass *pass // the pass its blocks are of (pass.put)
	rows filling[packed]
	kept filling[Kept]
}

// filling is the block a packer fills: block at of its pass, n filled.
type filling[T any] struct {
	block []T
	at, n int
}

// put stores v in f's block, first appending a new block to *blocks
// (under mu) when it is full, and returns v's index over all blocks.
func (f *filling[T]) put(mu *sync.Mutex, blocks *[][]T, v T) int32 {
	if f.n == len(f.block) {
		f.block, f.n = make([]T, rowBlock), 0
		mu.Lock()
		f.at = len(*blocks)
		*blocks = append(*blocks, f.block)
		mu.Unlock()
	}
	f.block[f.n] = v
	f.n++
	return int32(f.at*rowBlock + f.n - 1)
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

// pack is r packed, its texts numbered in t, without its Detail (detail
// -1: pass.put sets it).
func (pk *packer) pack(t *texts, r *score.Row) packed {
	p := packed{roleChoice: r.Key.Role.Choice, roleKind: r.Key.Role.Kind, detail: -1, promptTokens: int64(r.PromptTokens),
		offlineTokens: int64(r.OfflineTokens), latencyMS: r.LatencyMS, marks: r.Marks}
	for i, s := range rowTexts(r) {
		p.text[i] = pk.text(t, i, *s)
	}
	for i, b := range rowFlags(r) {
		if *b {
			p.flags |= 1 << i
		}
	}
	return p
}

// unpack is the row p packs; all are the pass's texts by number, details
// its details.
func unpack(p *packed, all []string, details []*score.Detail) score.Row {
	r := score.Row{Key: engine.Key{Role: engine.Role{Choice: p.roleChoice, Kind: p.roleKind}}, PromptTokens: int(p.promptTokens),
		OfflineTokens: int(p.offlineTokens), LatencyMS: p.latencyMS, Marks: p.marks}
	for i, s := range rowTexts(&r) {
		*s = all[p.text[i]]
	}
	for i, b := range rowFlags(&r) {
		*b = p.flags&(1<<i) != 0
	}
	if p.detail >= 0 {
		r.Detail = details[p.detail]
	}
	return r
}
