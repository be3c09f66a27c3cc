package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/runner"
	"github.com/omnibench/omnibench/internal/wsclient"
)

// wsFlags are the flags of the WebSocket kinds.
type wsFlags struct {
	utterances, turns int
	textRate          float64
	audio             string
	maxMessageBytes   int64
	audioPace         float64
}

func (w *wsFlags) addFlags(f *pflag.FlagSet) {
	f.IntVar(&w.utterances, "utterances-per-session", 1, "speech-ws: utterances each connection carries in turn (one record each; -n counts sessions)")
	f.IntVar(&w.turns, "turns-per-session", 1, "realtime, realtime-audio: turns each connection carries in turn (one record each; -n counts sessions)")
	f.Float64Var(&w.audioPace, "audio-pace", 1, "realtime-audio: pace of the spoken input's appends, a multiple of real time (1 = as spoken; 0 = all at once)")
	f.Float64Var(&w.textRate, "text-rate", 0, "speech-ws: send the text word by word at this many words per second (0 = whole)")
	f.StringVar(&w.audio, "ws-audio", wsclient.SpeechStream, "speech-ws audio: stream (binary PCM frames), file (one file per utterance, --audio-format) or timestamps (base64 audio.chunk with word timestamps)")
	f.Int64Var(&w.maxMessageBytes, "ws-max-message-bytes", wsclient.DefaultMaxMessageBytes, "cap on one WebSocket message from the server, bytes; a larger one fails the record as malformed")
}

// options checks the flags against the request kind.
func (w *wsFlags) options(f *pflag.FlagSet, kind string) (runner.WSOptions, error) {
	o := runner.WSOptions{TextRate: w.textRate, SpeechAudio: w.audio, MaxMessageBytes: w.maxMessageBytes, AudioPace: w.audioPace}
	if w.audioPace == 0 {
		o.AudioPace = -1 // the runner's "all at once"
	}
	speechWS, turns := []string{results.KindSpeechWS}, []string{results.KindRealtime, results.KindRealtimeAudio}
	for _, c := range []struct {
		flag string
		only []string
	}{
		{"utterances-per-session", speechWS}, {"text-rate", speechWS}, {"ws-audio", speechWS},
		{"turns-per-session", turns}, {"audio-pace", []string{results.KindRealtimeAudio}},
	} {
		if f.Changed(c.flag) && !slices.Contains(c.only, kind) {
			return o, fmt.Errorf("--%s applies only to --kind %s (the kind is %s)", c.flag, strings.Join(c.only, " or "), kind)
		}
	}
	switch {
	case w.utterances < 1:
		return o, fmt.Errorf("--utterances-per-session %d: must be at least 1", w.utterances)
	case w.turns < 1:
		return o, fmt.Errorf("--turns-per-session %d: must be at least 1", w.turns)
	case !(w.textRate >= 0) || w.textRate > 1e6:
		return o, fmt.Errorf("--text-rate %v: must be 0 (whole text) or a number of words per second", w.textRate)
	case !slices.Contains(wsclient.SpeechModes(), w.audio):
		return o, fmt.Errorf("--ws-audio %q: want %s", w.audio, strings.Join(wsclient.SpeechModes(), ", "))
	case !(w.audioPace >= 0) || w.audioPace > 1000:
		return o, fmt.Errorf("--audio-pace %v: must be 0 (all at once) or a multiple of real time up to 1000", w.audioPace)
	case w.maxMessageBytes < 1:
		return o, fmt.Errorf("--ws-max-message-bytes %d: must be at least 1", w.maxMessageBytes)
	}
	o.Turns = w.utterances
	if slices.Contains(turns, kind) {
		o.Turns = w.turns
	}
	return o, nil
}
