package client

import (
	"fmt"

	"github.com/omnibench/omnibench/internal/jsonscan"
)

// chatChunk is what the client needs from one chat.completion.chunk event
// (docs/reference/http-streams.md, section 2.3). Strings alias the event payload and are valid until
// the next event is read.
type chatChunk struct {
	Modality     jsonText // top-level "modality": "text" or "audio"; unset on the usage chunk
	Content      jsonText // choices[0].delta.content: text, or base64 audio when Modality is "audio"
	AudioData    jsonText // choices[0].delta.audio.data: base64 audio (OpenAI style)
	FinishReason jsonText // choices[0].finish_reason
	NoChoices    bool     // "choices" absent, null or [] (the final usage chunk)

	HasUsage         bool // a "usage" object was present
	PromptTokens     int64
	CompletionTokens int64
	HasPrompt        bool // usage.prompt_tokens was an integer
	HasCompletion    bool // usage.completion_tokens was an integer

	HasError     bool     // a non-null top-level "error" (mid-stream error event)
	ErrorMessage jsonText // error.message, or the error itself when it is a string
}

// decodeChatChunk fills c from one event payload without allocating. It
// extracts only the fields above and skips (while validating) everything
// else, such as id, model, logprobs and metrics. A top-level null gives an
// empty chunk, as it does for encoding/json.
//
// Each object is walked by a loop that switches on the key: the walk runs
// once per audio event, and a callback per member (an indirect call, which
// cannot inline) was part of its cost.
func decodeChatChunk(b []byte, c *chatChunk) error {
	*c = chatChunk{NoChoices: true}
	var o jsonscan.Object
	if err := openOrNull(&o, b, jsonscan.SkipSpace(b, 0), maxDepth, ""); err != nil {
		return err
	}
	for {
		ok, err := o.Next(b)
		if err != nil {
			return err
		}
		if !ok {
			return jsonscan.Finish(b, o.I)
		}
		switch {
		case o.KeyIs("modality"):
			o.I, err = readString(b, o.I, &c.Modality, "modality")
		case o.KeyIs("choices"):
			o.I, err = decodeChoices(b, o.I, o.Room, c)
		case o.KeyIs("usage"):
			o.I, err = decodeChatUsage(b, o.I, o.Room, c)
		case o.KeyIs("error"):
			o.I, err = decodeErrorValue(b, o.I, o.Room, &c.HasError, &c.ErrorMessage)
		default:
			o.I, err = jsonscan.SkipValue(b, o.I, o.Room)
		}
		if err != nil {
			return err
		}
	}
}

// decodeChoices reads the choices array into choice 0 of c. Like
// encoding/json decoding into a slice, a repeated non-empty array merges
// into the existing first element, while null or [] resets it.
func decodeChoices(b []byte, i, room int, c *chatChunk) (int, error) {
	if jsonscan.IsNull(b, i) {
		c.resetChoice()
		return i + 4, nil
	}
	var a jsonscan.Array
	if err := a.Open(b, i, room); err != nil {
		return 0, fmt.Errorf("choices: %w", err)
	}
	for {
		ok, err := a.Next(b)
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		if a.N == 1 {
			a.I, err = decodeChoice(b, a.I, a.Room, c)
		} else {
			a.I, err = jsonscan.SkipValue(b, a.I, a.Room)
		}
		if err != nil {
			return 0, err
		}
	}
	c.NoChoices = a.N == 0
	if c.NoChoices {
		c.resetChoice()
	}
	return a.I, nil
}

func (c *chatChunk) resetChoice() {
	c.Content, c.AudioData, c.FinishReason = jsonText{}, jsonText{}, jsonText{}
	c.NoChoices = true
}

func decodeChoice(b []byte, i, room int, c *chatChunk) (int, error) {
	var o jsonscan.Object
	if err := openOrNull(&o, b, i, room, "choices[0]"); err != nil {
		return 0, err
	}
	for {
		ok, err := o.Next(b)
		if err != nil || !ok {
			return o.I, err
		}
		switch {
		case o.KeyIs("delta"):
			o.I, err = decodeDelta(b, o.I, o.Room, c)
		case o.KeyIs("finish_reason"):
			o.I, err = readString(b, o.I, &c.FinishReason, "choices[0].finish_reason")
		default:
			o.I, err = jsonscan.SkipValue(b, o.I, o.Room)
		}
		if err != nil {
			return 0, err
		}
	}
}

func decodeDelta(b []byte, i, room int, c *chatChunk) (int, error) {
	var o jsonscan.Object
	if err := openOrNull(&o, b, i, room, "choices[0].delta"); err != nil {
		return 0, err
	}
	for {
		ok, err := o.Next(b)
		if err != nil || !ok {
			return o.I, err
		}
		switch {
		case o.KeyIs("content"):
			o.I, err = readString(b, o.I, &c.Content, "choices[0].delta.content")
		case o.KeyIs("audio"):
			o.I, err = decodeDeltaAudio(b, o.I, o.Room, c)
		default:
			o.I, err = jsonscan.SkipValue(b, o.I, o.Room)
		}
		if err != nil {
			return 0, err
		}
	}
}

func decodeDeltaAudio(b []byte, i, room int, c *chatChunk) (int, error) {
	var o jsonscan.Object
	if err := openOrNull(&o, b, i, room, "choices[0].delta.audio"); err != nil {
		return 0, err
	}
	for {
		ok, err := o.Next(b)
		if err != nil || !ok {
			return o.I, err
		}
		if o.KeyIs("data") {
			o.I, err = readString(b, o.I, &c.AudioData, "choices[0].delta.audio.data")
		} else {
			o.I, err = jsonscan.SkipValue(b, o.I, o.Room)
		}
		if err != nil {
			return 0, err
		}
	}
}

func decodeChatUsage(b []byte, i, room int, c *chatChunk) (int, error) {
	if !jsonscan.IsNull(b, i) {
		c.HasUsage = true
	}
	var o jsonscan.Object
	if err := openOrNull(&o, b, i, room, "usage"); err != nil {
		return 0, err
	}
	for {
		ok, err := o.Next(b)
		if err != nil || !ok {
			return o.I, err
		}
		switch {
		case o.KeyIs("prompt_tokens"):
			o.I, err = readInt(b, o.I, &c.PromptTokens, &c.HasPrompt, "usage.prompt_tokens")
		case o.KeyIs("completion_tokens"):
			o.I, err = readInt(b, o.I, &c.CompletionTokens, &c.HasCompletion, "usage.completion_tokens")
		default:
			o.I, err = jsonscan.SkipValue(b, o.I, o.Room)
		}
		if err != nil {
			return 0, err
		}
	}
}

// decodeErrorValue reads a top-level "error" member. null clears it (as
// encoding/json does for a pointer field); an object sets it and merges its
// message; a bare string or any other value also counts as an error (lenient:
// some servers send "error": "text").
func decodeErrorValue(b []byte, i, room int, has *bool, msg *jsonText) (int, error) {
	switch {
	case jsonscan.IsNull(b, i):
		*has, *msg = false, jsonText{}
		return i + 4, nil
	case i < len(b) && b[i] == '"':
		j, err := scanString(b, i, msg)
		if err != nil {
			return 0, err
		}
		*has = true
		return j, nil
	case i < len(b) && b[i] == '{':
	default:
		*has = true
		return jsonscan.SkipValue(b, i, room)
	}
	*has = true
	var o jsonscan.Object
	if err := openOrNull(&o, b, i, room, "error"); err != nil {
		return 0, err
	}
	for {
		ok, err := o.Next(b)
		if err != nil || !ok {
			return o.I, err
		}
		if o.KeyIs("message") {
			o.I, err = readString(b, o.I, msg, "error.message")
		} else {
			o.I, err = jsonscan.SkipValue(b, o.I, o.Room)
		}
		if err != nil {
			return 0, err
		}
	}
}
