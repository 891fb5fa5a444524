package engine

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// RoleKind is what a request asks of the model, beside the question's
// strategy and condition.
type RoleKind uint8

// The roles of a request. The zero value is RoleAnswer.
const (
	// RoleAnswer: the model answers the question (the scored request).
	RoleAnswer RoleKind = iota
	// RoleTranslation: the first stage of a two-step strategy, which
	// rewrites the question for the second stage to answer.
	RoleTranslation
	// RoleJudge: a judge model's verdict on another model's answer
	// (Role.Of names that model).
	RoleJudge
	// RoleChoice: the log-likelihood of one multiple-choice option
	// (Role.Choice is its 0-based index).
	RoleChoice
)

// Role is a request's typed role. Its text form, used in key strings,
// records and request files, is "" (answer), "translation",
// "judge:<model>" or "choice:<n>".
type Role struct {
	Of     string   // RoleJudge: the model whose answer is judged
	Choice int32    // RoleChoice: the option's index
	Kind   RoleKind // (last: the struct packs into 24 bytes)
}

// Judge is the role of a verdict on model's answer.
func Judge(model string) Role { return Role{Kind: RoleJudge, Of: model} }

// Choice is the role of multiple-choice option i.
func Choice(i int) Role { return Role{Kind: RoleChoice, Choice: int32(i)} }

// Translation is the role of a two-step strategy's first stage.
func Translation() Role { return Role{Kind: RoleTranslation} }

// String is the role's text form.
func (r Role) String() string {
	switch r.Kind {
	case RoleTranslation:
		return "translation"
	case RoleJudge:
		return "judge:" + r.Of
	case RoleChoice:
		return "choice:" + strconv.Itoa(int(r.Choice))
	}
	return ""
}

// Name is the role's kind as a word: answer, translation, judge or choice
// (the X-Bhasha-Role header, and the samples' role column).
func (r Role) Name() string {
	name, _, _ := strings.Cut(r.String(), ":")
	return cmp.Or(name, "answer")
}

// ParseRole is the inverse of Role.String; "answer" is accepted for "".
func ParseRole(s string) (Role, error) {
	switch {
	case s == "" || s == "answer":
		return Role{}, nil
	case s == "translation":
		return Translation(), nil
	case strings.HasPrefix(s, "judge:") && len(s) > len("judge:"):
		return Judge(s[len("judge:"):]), nil
	case strings.HasPrefix(s, "choice:"):
		i, err := strconv.ParseInt(s[len("choice:"):], 10, 32)
		if err != nil || i < 0 {
			return Role{}, fmt.Errorf("role %q: the choice is not a non-negative integer", s)
		}
		return Choice(int(i)), nil
	}
	return Role{}, fmt.Errorf("unknown role %q (want answer, translation, judge:<model> or choice:<n>)", s)
}

// MarshalText writes the text form.
func (r Role) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText reads the text form.
func (r *Role) UnmarshalText(b []byte) error {
	v, err := ParseRole(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// IsZero reports the answer role (omitted from JSON).
func (r Role) IsZero() bool { return r == Role{} }
