package experiment

import (
	"fmt"
	"slices"
	"sync"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/tables"
)

// TableGroup is some of a study's tables, built together because they
// share work (an index of the outcomes, the pairs the CLC tables read).
type TableGroup struct {
	// Names are the tables Build may return: every one it can, those its
	// rows and options do not call for (scaling without model sizes)
	// included. A name is in one group only.
	Names []string
	// Build builds the group's tables, in report order. get builds
	// (once) a table of another group that these are laid out from; it
	// returns nil for a table the study does not have.
	Build func(get func(name string) *tables.Table) []*tables.Table
}

// TableGrouper is implemented by a plan whose tables can be built group
// by group, so that asking for one table builds only its group (and the
// groups it reads). Its groups, built in order, give the tables its
// Tables gives, in the same order.
type TableGrouper interface {
	TableGroups(rows []score.Row, opt tables.Options) []TableGroup
}

// TableSet is a study's tables, built on demand: Table builds the group
// that holds the table asked for, All every group. Safe for concurrent
// use.
type TableSet struct {
	mu     sync.Mutex
	groups []TableGroup
	built  [][]*tables.Table // per group, nil until built
	// Builds counts the groups built (a test reads it to see that asking
	// for one table builds one group).
	Builds int
}

// TableSet prepares the study's tables over rows without building any
// (for a plan that is not a TableGrouper, the first Table builds them
// all). extra groups come after the study's (the answers table).
func (e *Experiment) TableSet(rows []score.Row, extra ...TableGroup) (*TableSet, error) {
	if e.plan == nil {
		return nil, fmt.Errorf("experiment %s is not built", e.Name)
	}
	o, err := e.tableOptions()
	if err != nil {
		return nil, err
	}
	var groups []TableGroup
	if g, ok := e.plan.(TableGrouper); ok {
		groups = g.TableGroups(rows, o)
	} else {
		plan := e.plan
		groups = []TableGroup{{Build: func(func(string) *tables.Table) []*tables.Table { return plan.Tables(rows, o) }}}
	}
	groups = append(groups, extra...)
	return &TableSet{groups: groups, built: make([][]*tables.Table, len(groups))}, nil
}

// Table builds (once) and returns the table name; false when the study
// has no such table.
func (s *TableSet) Table(name string) (*tables.Table, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.get(name)
}

// Built returns table name when the group that holds it is built, and
// builds nothing: false when it is not built (yet).
func (s *TableSet) Built(name string) (*tables.Table, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ts := range s.built { // nil until built
		if t := find(ts, name); t != nil {
			return t, true
		}
	}
	return nil, false
}

// get is Table with s.mu held: the groups that declare name first.
func (s *TableSet) get(name string) (*tables.Table, bool) {
	for _, all := range []bool{false, true} {
		for i, g := range s.groups {
			if all || g.Names == nil || slices.Contains(g.Names, name) {
				if t := find(s.build(i), name); t != nil {
					return t, true
				}
			}
		}
	}
	return nil, false
}

// find is the table of ts named name (nil: none).
func find(ts []*tables.Table, name string) *tables.Table {
	if i := slices.IndexFunc(ts, func(t *tables.Table) bool { return t.Name == name }); i >= 0 {
		return ts[i]
	}
	return nil
}

// build builds group i once.
func (s *TableSet) build(i int) []*tables.Table {
	if s.built[i] != nil {
		return s.built[i]
	}
	s.built[i] = []*tables.Table{} // a group reading itself through get finds nothing, not a loop
	s.Builds++
	s.built[i] = append(s.built[i], s.groups[i].Build(func(name string) *tables.Table {
		t, _ := s.get(name)
		return t
	})...)
	return s.built[i]
}

// All builds every group and returns every table, in report order.
func (s *TableSet) All() []*tables.Table {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*tables.Table
	for i := range s.groups {
		out = append(out, s.build(i)...)
	}
	return out
}
