package client

import "fmt"

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
	i := skipWS(b, 0)
	if isNull(b, i) {
		return finish(b, i+4)
	}
	o, err := openObject(b, i, 1)
	if err != nil {
		return err
	}
	for {
		key, ok, err := o.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		switch {
		case keyIs(key, "type"):
			o.i, err = readString(b, o.i, &e.Type, "type")
		case keyIs(key, "audio"):
			o.i, err = readString(b, o.i, &e.Audio, "audio")
		case keyIs(key, "usage"):
			o.i, err = decodeSpeechUsage(b, o.i, o.depth, e)
		case keyIs(key, "error"):
			o.i, err = decodeErrorValue(b, o.i, o.depth, &e.HasError, &e.ErrorMessage)
		default:
			o.i, err = skipValue(b, o.i, o.depth)
		}
		if err != nil {
			return err
		}
	}
	return finish(b, o.i)
}

func decodeSpeechUsage(b []byte, i, depth int, e *speechEvent) (int, error) {
	if isNull(b, i) {
		return i + 4, nil
	}
	o, err := openObject(b, i, depth+1)
	if err != nil {
		return 0, fmt.Errorf("usage: %w", err)
	}
	e.HasUsage = true
	for {
		key, ok, err := o.next()
		if err != nil {
			return 0, err
		}
		if !ok {
			return o.i, nil
		}
		switch {
		case keyIs(key, "input_tokens"):
			o.i, err = readInt(b, o.i, &e.InputTokens, &e.HasInput, "usage.input_tokens")
		case keyIs(key, "output_tokens"):
			o.i, err = readInt(b, o.i, &e.OutputTokens, &e.HasOutput, "usage.output_tokens")
		default:
			o.i, err = skipValue(b, o.i, o.depth)
		}
		if err != nil {
			return 0, err
		}
	}
}
