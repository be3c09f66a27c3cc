package client

import "fmt"

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
	var o object
	if err := o.openOrNull(b, skipWS(b, 0), 0, ""); err != nil {
		return err
	}
	for {
		ok, err := o.next(b)
		if err != nil {
			return err
		}
		if !ok {
			return finish(b, o.i)
		}
		switch {
		case o.keyIs("modality"):
			o.i, err = readString(b, o.i, &c.Modality, "modality")
		case o.keyIs("choices"):
			o.i, err = decodeChoices(b, o.i, o.depth, c)
		case o.keyIs("usage"):
			o.i, err = decodeChatUsage(b, o.i, o.depth, c)
		case o.keyIs("error"):
			o.i, err = decodeErrorValue(b, o.i, o.depth, &c.HasError, &c.ErrorMessage)
		default:
			o.i, err = skipValue(b, o.i, o.depth)
		}
		if err != nil {
			return err
		}
	}
}

// decodeChoices reads the choices array into choice 0 of c. Like
// encoding/json decoding into a slice, a repeated non-empty array merges
// into the existing first element, while null or [] resets it.
func decodeChoices(b []byte, i, depth int, c *chatChunk) (int, error) {
	if isNull(b, i) {
		c.resetChoice()
		return i + 4, nil
	}
	var a array
	if err := a.open(b, i, depth+1); err != nil {
		return 0, fmt.Errorf("choices: %w", err)
	}
	for {
		ok, err := a.next(b)
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		if a.n == 1 {
			a.i, err = decodeChoice(b, a.i, a.depth, c)
		} else {
			a.i, err = skipValue(b, a.i, a.depth)
		}
		if err != nil {
			return 0, err
		}
	}
	c.NoChoices = a.n == 0
	if c.NoChoices {
		c.resetChoice()
	}
	return a.i, nil
}

func (c *chatChunk) resetChoice() {
	c.Content, c.AudioData, c.FinishReason = jsonText{}, jsonText{}, jsonText{}
	c.NoChoices = true
}

func decodeChoice(b []byte, i, depth int, c *chatChunk) (int, error) {
	var o object
	if err := o.openOrNull(b, i, depth, "choices[0]"); err != nil {
		return 0, err
	}
	for {
		ok, err := o.next(b)
		if err != nil || !ok {
			return o.i, err
		}
		switch {
		case o.keyIs("delta"):
			o.i, err = decodeDelta(b, o.i, o.depth, c)
		case o.keyIs("finish_reason"):
			o.i, err = readString(b, o.i, &c.FinishReason, "choices[0].finish_reason")
		default:
			o.i, err = skipValue(b, o.i, o.depth)
		}
		if err != nil {
			return 0, err
		}
	}
}

func decodeDelta(b []byte, i, depth int, c *chatChunk) (int, error) {
	var o object
	if err := o.openOrNull(b, i, depth, "choices[0].delta"); err != nil {
		return 0, err
	}
	for {
		ok, err := o.next(b)
		if err != nil || !ok {
			return o.i, err
		}
		switch {
		case o.keyIs("content"):
			o.i, err = readString(b, o.i, &c.Content, "choices[0].delta.content")
		case o.keyIs("audio"):
			o.i, err = decodeDeltaAudio(b, o.i, o.depth, c)
		default:
			o.i, err = skipValue(b, o.i, o.depth)
		}
		if err != nil {
			return 0, err
		}
	}
}

func decodeDeltaAudio(b []byte, i, depth int, c *chatChunk) (int, error) {
	var o object
	if err := o.openOrNull(b, i, depth, "choices[0].delta.audio"); err != nil {
		return 0, err
	}
	for {
		ok, err := o.next(b)
		if err != nil || !ok {
			return o.i, err
		}
		if o.keyIs("data") {
			o.i, err = readString(b, o.i, &c.AudioData, "choices[0].delta.audio.data")
		} else {
			o.i, err = skipValue(b, o.i, o.depth)
		}
		if err != nil {
			return 0, err
		}
	}
}

func decodeChatUsage(b []byte, i, depth int, c *chatChunk) (int, error) {
	if !isNull(b, i) {
		c.HasUsage = true
	}
	var o object
	if err := o.openOrNull(b, i, depth, "usage"); err != nil {
		return 0, err
	}
	for {
		ok, err := o.next(b)
		if err != nil || !ok {
			return o.i, err
		}
		switch {
		case o.keyIs("prompt_tokens"):
			o.i, err = readInt(b, o.i, &c.PromptTokens, &c.HasPrompt, "usage.prompt_tokens")
		case o.keyIs("completion_tokens"):
			o.i, err = readInt(b, o.i, &c.CompletionTokens, &c.HasCompletion, "usage.completion_tokens")
		default:
			o.i, err = skipValue(b, o.i, o.depth)
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
func decodeErrorValue(b []byte, i, depth int, has *bool, msg *jsonText) (int, error) {
	switch {
	case isNull(b, i):
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
		return skipValue(b, i, depth)
	}
	*has = true
	var o object
	if err := o.openOrNull(b, i, depth, "error"); err != nil {
		return 0, err
	}
	for {
		ok, err := o.next(b)
		if err != nil || !ok {
			return o.i, err
		}
		if o.keyIs("message") {
			o.i, err = readString(b, o.i, msg, "error.message")
		} else {
			o.i, err = skipValue(b, o.i, o.depth)
		}
		if err != nil {
			return 0, err
		}
	}
}
