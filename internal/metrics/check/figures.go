package check

import (
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/summary"
)

// RunFigures are what the client observed during a run, in the terms the
// server's metrics count, so that rules can compare the two. Warm-up
// requests are included: the server counted them too.
type RunFigures struct {
	Requests int // every request sent

	// Completed counts requests by the finish reason the server would label
	// them with: delivered requests by their finish_reason ("stop" when the
	// response carried none, as speech streams do), plus "abort" for failed
	// requests the server had accepted (the request_failed path): those that
	// failed after the response started, and 5xx answers. Failures the server
	// never counts (connection errors, 4xx rejections) are left out.
	Completed map[string]int
	// CompletedTotal counts the requests the server finished normally
	// (results.Record.Delivered: successes, and responses failed only for
	// carrying no audio); the server records e2e latency for these.
	CompletedTotal int
	Failed         int // requests with an error class

	// ChatAudioResponses counts streamed chat responses that delivered audio:
	// the server records one TTFP observation for each.
	ChatAudioResponses int
	// TTFPSumS sums the client's TTFP over those responses.
	TTFPSumS float64

	// AudioFrames sums the decoded audio frames of successful requests (the
	// server counts frames when it finalizes a request).
	AudioFrames int64
	// Continuous counts successful streamed chat responses that played
	// without an underrun above each threshold, by threshold in integer ms
	// ("100").
	Continuous map[string]int

	PromptTokens     int
	CompletionTokens int

	// The same for speech streams (raw, SSE and WebSocket /v1/audio/speech):
	// SpeechStreams counts those that delivered audio, SpeechTTFPSumS sums
	// their TTFP, SpeechContinuous counts the successful ones continuous at
	// each threshold, and SpeechCompleted counts the successful ones. Only
	// servers since September 2026 count speech streams in their audio
	// families (see JudgeSpeechStreams).
	SpeechStreams    int
	SpeechTTFPSumS   float64
	SpeechContinuous map[string]int
	SpeechCompleted  int

	// ServerCountsSpeech says whether the server records speech streams in
	// its audio families, which the audio_streams* figures follow. Evaluate
	// sets it in its copy of the figures from JudgeSpeechStreams.
	ServerCountsSpeech bool
}

// Figures that count what the server's audio families hold: the chat path,
// plus speech streams when the server records them (ServerCountsSpeech).
const (
	figAudioStreams           = "audio_streams"
	figAudioStreamsTTFPSum    = "audio_streams_ttfp_sum_s"
	figAudioStreamsContinuous = "audio_streams_continuous"
)

// FiguresFromRecords derives run figures from the records of a run.
func FiguresFromRecords(recs []results.Record) RunFigures {
	return FiguresFromSet(summary.SetOf(recs))
}

// FiguresFromSet derives run figures from a run's requests (the totals a
// summary.Set keeps over every request, warm-up and ramp included).
func FiguresFromSet(set *summary.Set) RunFigures {
	t := set.Totals
	return RunFigures{
		Requests: t.Requests, Failed: t.Failed, CompletedTotal: t.CompletedTotal,
		Completed: maps.Clone(t.Completed), Continuous: maps.Clone(t.Continuous),
		ChatAudioResponses: t.ChatAudioResponses, TTFPSumS: t.TTFPSumS, AudioFrames: t.AudioFrames,
		PromptTokens: t.PromptTokens, CompletionTokens: t.CompletionTokens,
		SpeechStreams: t.SpeechStreams, SpeechTTFPSumS: t.SpeechTTFPSumS,
		SpeechContinuous: maps.Clone(t.SpeechContinuous), SpeechCompleted: t.SpeechCompleted,
	}
}

// Run figure names usable in rules as "run.<name>". Names ending in ".*"
// take a key: "completed.stop", "continuous.100".
func figureNames() []string {
	return []string{
		"requests", "completed", "completed.*", "failed",
		"chat_audio_responses", "ttfp_sum_s", "audio_frames", "continuous.*",
		"prompt_tokens", "completion_tokens",
		"speech_streams", "speech_ttfp_sum_s", "speech_continuous.*", "speech_completed",
		figAudioStreams, figAudioStreamsTTFPSum, figAudioStreamsContinuous + ".*",
	}
}

// validFigure reports whether name (without "run.") names a figure; a key
// may be "*" (expanded per label value by the rule's match).
func validFigure(name string) error {
	base, key, keyed := strings.Cut(name, ".")
	for _, n := range figureNames() {
		nb, _, nkeyed := strings.Cut(n, ".")
		if nb == base && nkeyed == keyed && (!keyed || key != "") {
			return nil
		}
	}
	return fmt.Errorf("unknown run figure %q (known: run.%s)", "run."+name, strings.Join(figureNames(), ", run."))
}

// Lookup returns a figure by name (without "run."). A keyed figure with a
// key the run never saw is 0: no request of that kind.
func (f *RunFigures) Lookup(name string) (float64, bool) {
	base, key, keyed := strings.Cut(name, ".")
	if keyed {
		if base == figAudioStreamsContinuous {
			n := f.Continuous[key]
			if f.ServerCountsSpeech {
				n += f.SpeechContinuous[key]
			}
			return float64(n), true
		}
		m, ok := f.keyed(base)
		return float64(m[key]), ok
	}
	withSpeech := func(chat, speech float64) float64 {
		if f.ServerCountsSpeech {
			return chat + speech
		}
		return chat
	}
	switch base {
	case "speech_streams":
		return float64(f.SpeechStreams), true
	case "speech_ttfp_sum_s":
		return f.SpeechTTFPSumS, true
	case "speech_completed":
		return float64(f.SpeechCompleted), true
	case figAudioStreams:
		return withSpeech(float64(f.ChatAudioResponses), float64(f.SpeechStreams)), true
	case figAudioStreamsTTFPSum:
		return withSpeech(f.TTFPSumS, f.SpeechTTFPSumS), true
	case "requests":
		return float64(f.Requests), true
	case "completed":
		return float64(f.CompletedTotal), true
	case "failed":
		return float64(f.Failed), true
	case "chat_audio_responses":
		return float64(f.ChatAudioResponses), true
	case "ttfp_sum_s":
		return f.TTFPSumS, true
	case "audio_frames":
		return float64(f.AudioFrames), true
	case "prompt_tokens":
		return float64(f.PromptTokens), true
	case "completion_tokens":
		return float64(f.CompletionTokens), true
	}
	return 0, false
}

// keyed returns the map of a keyed client figure; ok is false for other
// names.
func (f *RunFigures) keyed(base string) (m map[string]int, ok bool) {
	switch base {
	case "completed":
		return f.Completed, true
	case "continuous":
		return f.Continuous, true
	case "speech_continuous":
		return f.SpeechContinuous, true
	}
	return nil, false
}

// keys returns the sorted keys of a keyed figure ("completed",
// "continuous", "speech_continuous", "audio_streams_continuous").
func (f *RunFigures) keys(base string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(m map[string]int) {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	if base == figAudioStreamsContinuous {
		add(f.Continuous)
		if f.ServerCountsSpeech {
			add(f.SpeechContinuous)
		}
	} else if m, ok := f.keyed(base); ok {
		add(m)
	}
	sort.Strings(out)
	return out
}
