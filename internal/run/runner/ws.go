package runner

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/omnibench/omnibench/internal/audio/input"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/wsclient"
	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/scenarios"
)

// WSOptions configures the WebSocket kinds (speech-ws, realtime,
// realtime-audio). Each
// arrival of the load generator is one session: one connection carrying
// Turns utterances or turns in turn, each recorded as its own request. In a
// closed loop a worker therefore keeps one connection busy session after
// session; in an open loop every arrival opens its own connection (use
// Turns 1 for one utterance per arrival).
type WSOptions struct {
	Turns           int     // utterances or turns per session; 0 means 1
	TextRate        float64 // speech-ws: words per second of input.text; 0 sends each text whole
	SpeechAudio     string  // speech-ws audio mode (wsclient.SpeechStream, SpeechFile, SpeechTimestamps); "" is stream
	MaxMessageBytes int64   // cap on one server message; 0 means wsclient.DefaultMaxMessageBytes
	// AudioPace is realtime-audio's append pace, a multiple of real time:
	// 0 means 1 (as spoken), negative sends the input at once.
	AudioPace float64
}

// isWSKind reports whether kind is carried over WebSocket sessions.
func isWSKind(kind string) bool {
	return kind == results.KindSpeechWS || kind == results.KindRealtime || kind == results.KindRealtimeAudio
}

// turns is the number of records one session yields.
func (o WSOptions) turns() int { return max(o.Turns, 1) }

// wsSession builds arrival a's session: its texts are the prompts of the
// record sequence numbers a.Seq*K ... a.Seq*K+K-1, so that every record of
// the run has its own sequence number and prompt.
func wsSession(w *scenarios.Workload, seed int64, o WSOptions, a load.Arrival) wsclient.Session {
	k := o.turns()
	spec := w.Request(a.Seq*k, seed)
	texts := make([]string, k)
	var audio []*input.Clip
	for i := range texts {
		texts[i] = w.Prompt(a.Seq*k+i, seed)
		if spec.Kind == results.KindRealtimeAudio {
			audio = append(audio, w.Request(a.Seq*k+i, seed).InputAudio)
		}
	}
	endpoint := spec.Endpoint
	if endpoint == scenarios.DefaultEndpoint(spec.Kind) {
		endpoint = "" // the kind's own (with ?duplex=1 for realtime)
	}
	return wsclient.Session{
		Seq:           a.Seq,
		Kind:          spec.Kind,
		Endpoint:      endpoint,
		Model:         spec.Model,
		Voice:         spec.Voice,
		Texts:         texts,
		SpeechAudio:   o.SpeechAudio,
		AudioFormat:   spec.AudioFormat,
		PCMSampleRate: spec.PCMSampleRate,
		TextRate:      o.TextRate,
		Audio:         audio,
		AudioPace:     o.AudioPace,
		Extra:         spec.ExtraBody,
		Headers:       spec.Headers,
		RefAudio:      spec.RefAudio, // session.config takes one: the first utterance's
		RefText:       spec.RefText,
	}
}

// wsReference is the text the transcription of record i of a session is
// scored against: the utterance's input text for speech-ws, whose audio
// speaks it; for realtime the text the response came with (said), the
// transcript of the model's own speech; none for realtime-audio.
func wsReference(sess wsclient.Session, i int, said string) string {
	switch {
	case sess.Kind == results.KindRealtime:
		return said
	case sess.Kind != results.KindSpeechWS || i < 0 || i >= len(sess.Texts):
		return ""
	}
	return sess.Texts[i]
}

// wsKeep says what of each response a session keeps for its record's
// sinks: the PCM (saved audio, transcription), the text (transcription's
// reference).
type wsKeep struct{ audio, text bool }

// runWSSession runs one arrival's session, handing each record (the i-th of
// the session) to deliver as it completes, with its PCM and its text when
// keep says so. The first record's scheduling lag is the arrival's; a later
// one is due when the one before it ended, so its lag is 0.
func runWSSession(ctx context.Context, ws *wsclient.Client, sess wsclient.Session, k int, a load.Arrival, keep wsKeep,
	started func(), deliver func(i int, rec *results.Record, audio *bytes.Buffer, said string)) {
	// Begin, Audio, Text and End of one session run on its goroutine, in order.
	audio := map[int]*bytes.Buffer{}
	text := map[int]*cappedText{}
	t := wsclient.Turn{
		Begin: func(i int) *results.Record {
			seq := a.Seq*k + i
			rec := &results.Record{ID: fmt.Sprintf("req-%06d", seq), Seq: seq, Warmup: a.Warmup}
			rec.SentS = time.Since(a.Start).Seconds()
			rec.IntendedS = rec.SentS
			if i == 0 {
				rec.IntendedS = a.Intended.Seconds()
			}
			rec.LagS = rec.SentS - rec.IntendedS
			started()
			return rec
		},
		End: func(i int, rec *results.Record) {
			var said string
			if t := text[i]; t != nil {
				said = t.b.String()
			}
			deliver(i, rec, audio[i], said)
			delete(audio, i)
			delete(text, i)
		},
	}
	if keep.audio {
		t.Audio = func(i int) io.Writer {
			audio[i] = new(bytes.Buffer)
			return audio[i]
		}
	}
	if keep.text {
		t.Text = func(i int) io.Writer {
			text[i] = new(cappedText)
			return text[i]
		}
	}
	ws.Run(ctx, sess, t)
}
