package lang

import "slices"

// Code is the registry's canonical code: ISO 639-3.
func (l Language) Code() string { return l.ISO3 }

// All returns every language, scheduled ones first, in registry order.
func (r *Registry) All() []Language { return slices.Clone(r.langs) }
