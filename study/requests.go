package study

import (
	"github.com/bhashalab/bhasha/analysis/extract"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/run"
)

// Requests, their keys and the records that answer them.
type (
	// Request is [engine.Request]: one request of a plan, with its key.
	Request = engine.Request
	// Key is [engine.Key]: what identifies a request and its record.
	Key = engine.Key
	// Kind is [engine.Kind]: the endpoint a request posts to.
	Kind = engine.Kind
	// Message is [engine.Message]: one chat message.
	Message = engine.Message
	// Decoding is [engine.Decoding]: a request's sampling settings.
	Decoding = engine.Decoding
	// Record is [engine.Record]: a request's answer as the run keeps it.
	Record = engine.Record
	// Manifest is [run.Manifest]: a run's provenance (servers, model
	// identities, inputs, decoding, counts, whether it was simulated).
	Manifest = run.Manifest
	// Role is [engine.Role]: what a request is for (the answer, a
	// translation, a judge's verdict, a choice's likelihood).
	Role = engine.Role
)

// Request kinds, roles, cues and the status of an answered request.
const (
	// Chat is [engine.Chat]: /v1/chat/completions.
	Chat = engine.Chat
	// Completion is [engine.Completion]: /v1/completions, a raw prompt.
	Completion = engine.Completion
	// RoleAnswer is [engine.RoleAnswer]: the scored request.
	RoleAnswer = engine.RoleAnswer
	// RoleTranslation is [engine.RoleTranslation]: a two-step
	// strategy's first stage.
	RoleTranslation = engine.RoleTranslation
	// RoleJudge is [engine.RoleJudge]: a judge's verdict on an answer.
	RoleJudge = engine.RoleJudge
	// RoleChoice is [engine.RoleChoice]: one option's log-likelihood.
	RoleChoice = engine.RoleChoice
	// CueTranslateFirst is [engine.CueTranslateFirst], for the
	// simulator: the prompt asks for a translation first.
	CueTranslateFirst = engine.CueTranslateFirst
	// CueOneWordVerdict is [engine.CueOneWordVerdict], for the
	// simulator: a judge's verdict is one word.
	CueOneWordVerdict = engine.CueOneWordVerdict
	// StatusOK is [engine.StatusOK]: a record whose request was answered.
	StatusOK = engine.StatusOK
)

// Translation is [engine.Translation]: the role of a two-step
// strategy's first stage.
func Translation() Role { return engine.Translation() }

// Judge is [engine.Judge]: the role of a judge's verdict on model's
// answer.
func Judge(model string) Role { return engine.Judge(model) }

// Choice is [engine.Choice]: the role of the log-likelihood of option i.
func Choice(i int) Role { return engine.Choice(i) }

// ExtractResult is [extract.Result]: the answer a plan's Extract read
// from a response, and how.
type ExtractResult = extract.Result

// How an answer was read.
const (
	// MethodText is [extract.MethodText]: the whole output, trimmed.
	MethodText = extract.MethodText
	// MethodFirstLine is [extract.MethodFirstLine]: its first line.
	MethodFirstLine = extract.MethodFirstLine
	// MethodUnparsed is [extract.MethodUnparsed]: nothing could be read.
	MethodUnparsed = extract.MethodUnparsed
)

// ExtractField is [extract.Field]: the string field of the JSON object
// in raw.
func ExtractField(raw, field string) ExtractResult { return extract.Field(raw, field) }

// ExtractFirstLine is [extract.FirstLine]: the first line of raw,
// trimmed; empty output is unparsed.
func ExtractFirstLine(raw string) ExtractResult { return extract.FirstLine(raw) }
