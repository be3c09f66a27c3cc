package client

import "fmt"

// chatChunk is what the client needs from one chat.completion.chunk event
// (protocol section 3). Strings alias the event payload and are valid until
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
func decodeChatChunk(b []byte, c *chatChunk) error {
	*c = chatChunk{NoChoices: true}
	end, err := members(b, skipWS(b, 0), 0, "", func(key jsonText, i, depth int) (int, bool, error) {
		switch {
		case keyIs(key, "modality"):
			i, err := readString(b, i, &c.Modality, "modality")
			return i, true, err
		case keyIs(key, "choices"):
			i, err := decodeChoices(b, i, depth, c)
			return i, true, err
		case keyIs(key, "usage"):
			i, err := decodeChatUsage(b, i, depth, c)
			return i, true, err
		case keyIs(key, "error"):
			i, err := decodeErrorValue(b, i, depth, &c.HasError, &c.ErrorMessage)
			return i, true, err
		}
		return i, false, nil
	})
	if err != nil {
		return err
	}
	return finish(b, end)
}

// decodeChoices reads the choices array into choice 0 of c. Like
// encoding/json decoding into a slice, a repeated non-empty array merges
// into the existing first element, while null or [] resets it.
func decodeChoices(b []byte, i, depth int, c *chatChunk) (int, error) {
	if isNull(b, i) {
		c.resetChoice()
		return i + 4, nil
	}
	a, err := openArray(b, i, depth+1)
	if err != nil {
		return 0, fmt.Errorf("choices: %w", err)
	}
	for {
		ok, err := a.next()
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
	return members(b, i, depth, "choices[0]", func(key jsonText, i, depth int) (int, bool, error) {
		switch {
		case keyIs(key, "delta"):
			i, err := decodeDelta(b, i, depth, c)
			return i, true, err
		case keyIs(key, "finish_reason"):
			i, err := readString(b, i, &c.FinishReason, "choices[0].finish_reason")
			return i, true, err
		}
		return i, false, nil
	})
}

func decodeDelta(b []byte, i, depth int, c *chatChunk) (int, error) {
	return members(b, i, depth, "choices[0].delta", func(key jsonText, i, depth int) (int, bool, error) {
		switch {
		case keyIs(key, "content"):
			i, err := readString(b, i, &c.Content, "choices[0].delta.content")
			return i, true, err
		case keyIs(key, "audio"):
			i, err := decodeDeltaAudio(b, i, depth, c)
			return i, true, err
		}
		return i, false, nil
	})
}

func decodeDeltaAudio(b []byte, i, depth int, c *chatChunk) (int, error) {
	return members(b, i, depth, "choices[0].delta.audio", func(key jsonText, i, _ int) (int, bool, error) {
		if !keyIs(key, "data") {
			return i, false, nil
		}
		i, err := readString(b, i, &c.AudioData, "choices[0].delta.audio.data")
		return i, true, err
	})
}

func decodeChatUsage(b []byte, i, depth int, c *chatChunk) (int, error) {
	if !isNull(b, i) {
		c.HasUsage = true
	}
	return members(b, i, depth, "usage", func(key jsonText, i, _ int) (int, bool, error) {
		switch {
		case keyIs(key, "prompt_tokens"):
			i, err := readInt(b, i, &c.PromptTokens, &c.HasPrompt, "usage.prompt_tokens")
			return i, true, err
		case keyIs(key, "completion_tokens"):
			i, err := readInt(b, i, &c.CompletionTokens, &c.HasCompletion, "usage.completion_tokens")
			return i, true, err
		}
		return i, false, nil
	})
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
		t, j, err := scanString(b, i)
		if err != nil {
			return 0, err
		}
		*has, *msg = true, t
		return j, nil
	case i < len(b) && b[i] == '{':
	default:
		*has = true
		return skipValue(b, i, depth)
	}
	*has = true
	return members(b, i, depth, "error", func(key jsonText, i, _ int) (int, bool, error) {
		if !keyIs(key, "message") {
			return i, false, nil
		}
		i, err := readString(b, i, msg, "error.message")
		return i, true, err
	})
}

// members walks the JSON object (or null) at b[i], which sits at nesting
// depth depth, and hands each member's key and value offset to field. field
// reads the value and returns the offset after it with handled true, or
// returns handled false to have the value skipped (and validated). where
// names the object in errors ("" for the top level). members returns the
// offset after the object. field is only called, never kept, so a closure
// passed here stays on the stack: the walk allocates nothing.
func members(b []byte, i, depth int, where string, field func(key jsonText, i, depth int) (int, bool, error)) (int, error) {
	if isNull(b, i) {
		return i + 4, nil
	}
	o, err := openObject(b, i, depth+1)
	if err != nil {
		if where == "" {
			return 0, err
		}
		return 0, fmt.Errorf("%s: %w", where, err)
	}
	for {
		key, ok, err := o.next()
		if err != nil {
			return 0, err
		}
		if !ok {
			return o.i, nil
		}
		next, handled, err := field(key, o.i, o.depth)
		if err == nil && !handled {
			next, err = skipValue(b, o.i, o.depth)
		}
		if err != nil {
			return 0, err
		}
		o.i = next
	}
}
