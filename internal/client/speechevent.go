package client

import "github.com/omnibench/omnibench/internal/jsonscan"

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
		case o.KeyIs("type"):
			o.I, err = readString(b, o.I, &e.Type, "type")
		case o.KeyIs("audio"):
			o.I, err = readString(b, o.I, &e.Audio, "audio")
		case o.KeyIs("usage"):
			o.I, err = decodeSpeechUsage(b, o.I, o.Room, e)
		case o.KeyIs("error"):
			o.I, err = decodeErrorValue(b, o.I, o.Room, &e.HasError, &e.ErrorMessage)
		default:
			o.I, err = jsonscan.SkipValue(b, o.I, o.Room)
		}
		if err != nil {
			return err
		}
	}
}

func decodeSpeechUsage(b []byte, i, room int, e *speechEvent) (int, error) {
	if !jsonscan.IsNull(b, i) {
		e.HasUsage = true
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
		case o.KeyIs("input_tokens"):
			o.I, err = readInt(b, o.I, &e.InputTokens, &e.HasInput, "usage.input_tokens")
		case o.KeyIs("output_tokens"):
			o.I, err = readInt(b, o.I, &e.OutputTokens, &e.HasOutput, "usage.output_tokens")
		default:
			o.I, err = jsonscan.SkipValue(b, o.I, o.Room)
		}
		if err != nil {
			return 0, err
		}
	}
}
