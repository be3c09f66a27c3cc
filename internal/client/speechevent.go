package client

// Speech SSE event types (docs/reference/http-streams.md, section 3.4).
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
// the same rules (and the same kind of walk) as decodeChatChunk.
func decodeSpeechEvent(b []byte, e *speechEvent) error {
	*e = speechEvent{}
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
		case o.keyIs("type"):
			o.i, err = readString(b, o.i, &e.Type, "type")
		case o.keyIs("audio"):
			o.i, err = readString(b, o.i, &e.Audio, "audio")
		case o.keyIs("usage"):
			o.i, err = decodeSpeechUsage(b, o.i, o.depth, e)
		case o.keyIs("error"):
			o.i, err = decodeErrorValue(b, o.i, o.depth, &e.HasError, &e.ErrorMessage)
		default:
			o.i, err = skipValue(b, o.i, o.depth)
		}
		if err != nil {
			return err
		}
	}
}

func decodeSpeechUsage(b []byte, i, depth int, e *speechEvent) (int, error) {
	if !isNull(b, i) {
		e.HasUsage = true
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
		case o.keyIs("input_tokens"):
			o.i, err = readInt(b, o.i, &e.InputTokens, &e.HasInput, "usage.input_tokens")
		case o.keyIs("output_tokens"):
			o.i, err = readInt(b, o.i, &e.OutputTokens, &e.HasOutput, "usage.output_tokens")
		default:
			o.i, err = skipValue(b, o.i, o.depth)
		}
		if err != nil {
			return 0, err
		}
	}
}
