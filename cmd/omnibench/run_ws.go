package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/omnibench/omnibench/results"
	"github.com/omnibench/omnibench/runner"
	"github.com/omnibench/omnibench/wsclient"
)

// wsFlags are the flags of the WebSocket kinds.
type wsFlags struct {
	utterances, turns int
	textRate          float64
	audio             string
	maxMessageBytes   int64
}

func (w *wsFlags) addFlags(f *pflag.FlagSet) {
	f.IntVar(&w.utterances, "utterances-per-session", 1, "speech-ws: utterances each connection carries in turn (one record each; -n counts sessions)")
	f.IntVar(&w.turns, "turns-per-session", 1, "realtime: text-in, audio-out turns each connection carries in turn (one record each; -n counts sessions)")
	f.Float64Var(&w.textRate, "text-rate", 0, "speech-ws: send the text word by word at this many words per second (0 = whole)")
	f.StringVar(&w.audio, "ws-audio", wsclient.SpeechStream, "speech-ws audio: stream (binary PCM frames), file (one file per utterance, --audio-format) or timestamps (base64 audio.chunk with word timestamps)")
	f.Int64Var(&w.maxMessageBytes, "ws-max-message-bytes", wsclient.DefaultMaxMessageBytes, "cap on one WebSocket message from the server, bytes; a larger one fails the record as malformed")
}

// options checks the flags against the request kind.
func (w *wsFlags) options(f *pflag.FlagSet, kind string) (runner.WSOptions, error) {
	o := runner.WSOptions{TextRate: w.textRate, SpeechAudio: w.audio, MaxMessageBytes: w.maxMessageBytes}
	for _, c := range []struct {
		flag string
		only string
	}{
		{"utterances-per-session", results.KindSpeechWS}, {"text-rate", results.KindSpeechWS},
		{"ws-audio", results.KindSpeechWS}, {"turns-per-session", results.KindRealtime},
	} {
		if f.Changed(c.flag) && kind != c.only {
			return o, fmt.Errorf("--%s applies only to --kind %s (the kind is %s)", c.flag, c.only, kind)
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
	case w.maxMessageBytes < 1:
		return o, fmt.Errorf("--ws-max-message-bytes %d: must be at least 1", w.maxMessageBytes)
	}
	o.Turns = w.utterances
	if kind == results.KindRealtime {
		o.Turns = w.turns
	}
	return o, nil
}
