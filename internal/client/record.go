package client

import (
	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/secret"
)

// This file holds the record-filling steps that other transports (the
// WebSocket kinds in package wsclient) share with the HTTP kinds, so that a
// chunk timeline, its RTFs and its continuity mean the same whatever
// carried the audio.

// AddChunk appends one non-empty audio chunk of n PCM bytes that arrived off
// seconds after the send time to rec's timeline, and updates TTFP, the last
// audio offset and the byte total. Empty chunks are not chunks.
func AddChunk(rec *results.Record, off float64, n int) {
	if n <= 0 {
		return
	}
	if rec.ChunkArrivalsS == nil {
		rec.ChunkArrivalsS = make([]float64, 0, chunkCap)
		rec.ChunkBytes = make([]int, 0, chunkCap)
	}
	if len(rec.ChunkArrivalsS) == 0 {
		rec.TTFPS = off
	}
	rec.LastAudioS = off
	rec.ChunkArrivalsS = append(rec.ChunkArrivalsS, off)
	rec.ChunkBytes = append(rec.ChunkBytes, n)
	rec.AudioBytes += int64(n)
}

// FinishAudio fills the fields derived from rec's chunk timeline, for audio
// in format f: frames, duration, the RTFs and the player simulations, with
// the client's continuity options. It does nothing without audio. E2ES and
// LastAudioS must be final.
func (c *Client) FinishAudio(rec *results.Record, f wav.Format) {
	if rec.AudioBytes == 0 || f.BytesPerFrame() <= 0 || f.SampleRate <= 0 {
		return
	}
	rec.SampleRate, rec.SampleWidth, rec.Channels = f.SampleRate, f.BitsPerSample/8, f.Channels
	rec.AudioFrames = rec.AudioBytes / int64(f.BytesPerFrame())
	rec.AudioDurationS = float64(rec.AudioFrames) / float64(f.SampleRate)
	if rec.AudioDurationS > 0 {
		rec.RTFLastChunk = rec.LastAudioS / rec.AudioDurationS
		rec.RTFE2E = rec.E2ES / rec.AudioDurationS
	}
	// RTFServer stays nil: no server reports its generation time in band.
	in := continuity.Input{
		ArrivalsS:   rec.ChunkArrivalsS,
		Bytes:       rec.ChunkBytes,
		SampleRate:  f.SampleRate,
		SampleWidth: f.BitsPerSample / 8,
		Channels:    f.Channels,
	}
	res := continuity.Simulate(in, c.opts.ContinuityMode)
	ok := make(map[string]bool, len(c.thresholds))
	for _, t := range c.thresholds {
		ok[continuity.ThresholdLabel(t)] = res.Continuous(t)
	}
	rec.Continuity = &results.Continuity{
		Mode:           c.opts.ContinuityMode.String(),
		MaxUnderrunS:   res.MaxUnderrunS,
		UnderrunEvents: res.UnderrunEvents,
		OK:             ok,
		Preroll:        playerResult(continuity.Preroll(in, c.opts.Preroll)),
		StallResume:    playerResult(continuity.StallResume(in)),
	}
}

// ServerText makes server-supplied text safe for one line of a record
// (control characters removed, credentials masked, then clipped with what
// the cut leaves of a credential masked too), as the HTTP kinds do.
func ServerText(red *secret.Redactor, s string) string { return clip(red, s) }
