package check

import (
	"fmt"
	"strings"

	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
	"github.com/omnibench/omnibench/scrape"
)

// Servers count speech streams (raw, SSE and WebSocket /v1/audio/speech) in
// audio_ttfp_s, audio_underrun_s and audio_continuity_ok_total only since
// September 2026; older servers count the streaming chat path alone. The
// figures named audio_streams* are what the server's audio families should
// hold: chat, plus speech streams when JudgeSpeechStreams finds that the
// server records them.

// SpeechVerdict says whether a server records speech streams in its audio
// families, and how that was told.
type SpeechVerdict struct {
	Counted bool
	How     string
	// Families are the speech-stream families in the scrape, as exposed
	// (known and unknown names alike).
	Families []string
}

// JudgeSpeechStreams tells from the scrape after a run (and the run's
// figures) whether the server records speech streams. The rule cannot
// report a match the server did not make: a speech-stream family
// (vllm_omni:speech_st*, registered at start-up by every server that has
// them) says yes; without one, only an audio_ttfp_s delta that equals the
// run's chat responses plus its speech streams (more than zero) says yes.
// Anything else, including a server that recorded nothing, is an older
// server that records chat streams only, and the comparisons then leave the
// speech streams out and say so.
func JudgeSpeechStreams(after scrape.Families, delta *scrape.Delta, fig *RunFigures) SpeechVerdict {
	v := SpeechVerdict{Families: speechStreamFamilies(after)}
	if len(v.Families) > 0 {
		v.Counted = true
		v.How = "the server exports speech-stream counters (" + strings.Join(v.Families, ", ") + ")"
		return v
	}
	if fig == nil || fig.SpeechStreams == 0 {
		v.How = "no speech-stream family in the scrape"
		return v
	}
	want := fig.ChatAudioResponses + fig.SpeechStreams
	if delta != nil {
		if h, ok := delta.HistogramDelta("audio_ttfp_s", nil); ok && h.Count == float64(want) {
			v.Counted = true
			v.How = fmt.Sprintf("no speech-stream family in the scrape, but audio_ttfp_s counted the run's %d speech streams", fig.SpeechStreams)
			return v
		}
	}
	v.How = "the server does not record speech streams: no " + omnimetrics.PrefixCurrent + omnimetrics.SpeechStreamStem +
		"* family, and audio_ttfp_s did not count them (a server from before September 2026)"
	return v
}

// speechStreamFamilies lists the speech-stream families of a scrape by
// their exposed names, `_created` companions left out.
func speechStreamFamilies(fs scrape.Families) []string {
	var out []string
	stem := omnimetrics.PrefixDesign + omnimetrics.SpeechStreamStem
	for _, n := range fs.Names() {
		if f := fs[n]; strings.HasPrefix(n, stem) && f.CreatedFor == "" {
			out = append(out, f.Original)
		}
	}
	return out
}

// unknownSpeechStreamFamilies lists the speech-stream families of a scrape
// that are not the simulator's guessed names: tolerated, never checked.
func unknownSpeechStreamFamilies(fs scrape.Families) []string {
	known := map[string]bool{}
	for _, s := range omnimetrics.SpeechStreamFamilies() {
		known[omnimetrics.PrefixDesign+s.Name] = true
	}
	var out []string
	for _, name := range speechStreamFamilies(fs) {
		if !known[scrape.Canonical(name)] {
			out = append(out, name)
		}
	}
	return out
}

// speechCaveat says what a comparison with a figure that counts audio
// streams must add about speech streams: a note, and whether the rule
// cannot be decided (the server does not record the run's speech streams
// and the run has no chat stream to compare instead, so a match of zeros
// would be a false one).
func (ev *evaluator) speechCaveat(fig string) (note string, undecided bool) {
	run := ev.in.Run
	if !strings.HasPrefix(fig, figAudioStreams) || run == nil || run.SpeechStreams == 0 {
		return "", false
	}
	v := ev.speech
	if v.Counted {
		return fmt.Sprintf("chat and speech streams: %s", v.How), false
	}
	if run.ChatAudioResponses == 0 {
		return fmt.Sprintf("not compared: %s; the run's %d speech streams are not in the server's audio families, and it has no chat stream",
			v.How, run.SpeechStreams), true
	}
	return fmt.Sprintf("chat streams only: %s; the run's %d speech streams are left out", v.How, run.SpeechStreams), false
}
