package simulator

import (
	"bytes"
	"slices"
	"testing"
)

// TestFaultEmptyAudioEvent: with the fault, the first audio event of a
// streaming chat has content "" and goes out with the first text word (or
// right before the first audio chunk in an audio-only response); the rest
// of the stream, its PCM included, is the stream without the fault (the
// fault moves no other draw), and the server's TTFP is observed once.
func TestFaultEmptyAudioEvent(t *testing.T) {
	for _, mods := range [][]string{nil, {"audio"}} {
		extra := map[string]any{"audio": map[string]any{"format": "pcm"}}
		if mods != nil {
			extra["modalities"] = mods
		}
		plain := doChat(t, startSim(t, testConfig()), chatReq(prompt25, extra))
		run := faultSim(t, Faults{EmptyAudioEvent: 1})
		cs := doChat(t, run, chatReq(prompt25, extra))
		if !cs.done || cs.readErr != nil {
			t.Fatalf("modalities %v: done %v, read error %v", mods, cs.done, cs.readErr)
		}
		var kinds []string
		for _, c := range cs.chunks {
			if c.Modality == nil || len(c.Choices) == 0 || c.Choices[0].Delta.Content == nil {
				continue
			}
			k := *c.Modality
			if k == "audio" && *c.Choices[0].Delta.Content == "" {
				k = "empty"
			}
			kinds = append(kinds, k)
		}
		want := []string{"text", "empty", "text"} // role chunk, the empty event, the first word
		if mods != nil {
			want = []string{"empty", "audio"}
		}
		if len(kinds) < len(want) || !slices.Equal(kinds[:len(want)], want) {
			t.Errorf("modalities %v: events start %v, want %v", mods, kinds[:min(len(kinds), 6)], want)
		}
		empties := 0
		for _, k := range kinds {
			if k == "empty" {
				empties++
			}
		}
		if empties != 1 {
			t.Errorf("modalities %v: %d empty audio events, want 1", mods, empties)
		}
		if got, want := pcmOf(t, cs.audio, false), pcmOf(t, plain.audio, false); len(got) == 0 || !bytes.Equal(got, want) {
			t.Errorf("modalities %v: PCM %d bytes, the fault-free stream's %d (want equal)", mods, len(got), len(want))
		}
		mfs, _ := scrape(t, run.URL, "")
		if n := histCount(mfs, p+"audio_ttfp_s", lbl(0)); n != 1 {
			t.Errorf("modalities %v: server TTFP observed %d times, want 1", mods, n)
		}
	}
}
