package client

// Speech SSE event types (protocol section 4).
const (
	speechDelta = "speech.audio.delta"
	speechDone  = "speech.audio.done"
	speechError = "speech.audio.error"
)

// speechEvent is what the client needs from one /v1/audio/speech SSE event.
// Strings alias the event payload and are valid until the next event.
type speechEvent struct {
	Type  jsonText // "type": speech.audio.delta / .done / .error
	Audio jsonText // base64 PCM, or the bare WAV header in the first wav delta

	HasUsage     bool
	InputTokens  int64
	OutputTokens int64
	HasInput     bool
	HasOutput    bool
	HasError     bool
	ErrorMessage jsonText
}

// decodeSpeechEvent fills e from one event payload without allocating, with
// the same rules as decodeChatChunk.
func decodeSpeechEvent(b []byte, e *speechEvent) error {
	*e = speechEvent{}
	end, err := members(b, skipWS(b, 0), 0, "", func(key jsonText, i, depth int) (int, bool, error) {
		switch {
		case keyIs(key, "type"):
			i, err := readString(b, i, &e.Type, "type")
			return i, true, err
		case keyIs(key, "audio"):
			i, err := readString(b, i, &e.Audio, "audio")
			return i, true, err
		case keyIs(key, "usage"):
			i, err := decodeSpeechUsage(b, i, depth, e)
			return i, true, err
		case keyIs(key, "error"):
			i, err := decodeErrorValue(b, i, depth, &e.HasError, &e.ErrorMessage)
			return i, true, err
		}
		return i, false, nil
	})
	if err != nil {
		return err
	}
	return finish(b, end)
}

func decodeSpeechUsage(b []byte, i, depth int, e *speechEvent) (int, error) {
	if !isNull(b, i) {
		e.HasUsage = true
	}
	return members(b, i, depth, "usage", func(key jsonText, i, _ int) (int, bool, error) {
		switch {
		case keyIs(key, "input_tokens"):
			i, err := readInt(b, i, &e.InputTokens, &e.HasInput, "usage.input_tokens")
			return i, true, err
		case keyIs(key, "output_tokens"):
			i, err := readInt(b, i, &e.OutputTokens, &e.HasOutput, "usage.output_tokens")
			return i, true, err
		}
		return i, false, nil
	})
}
