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
	// CueTranslateFirst is [engine.CueTranslateFirst], for the
	// simulator: the prompt asks for a translation first.
	CueTranslateFirst = engine.CueTranslateFirst
	// CueOneWordVerdict is [engine.CueOneWordVerdict], for the
	// simulator: a judge's verdict is one word.
	CueOneWordVerdict = engine.CueOneWordVerdict
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
)
