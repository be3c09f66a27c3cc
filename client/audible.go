package client

import (
	"time"

	"github.com/omnibench/omnibench/flacfile"
	"github.com/omnibench/omnibench/onset"
	"github.com/omnibench/omnibench/results"
	"github.com/omnibench/omnibench/wav"
)

// startOnset sets up the audible-onset detector once the response's audio
// format is known. Only s16 PCM is analysed (the format every kind
// delivers); for other sample widths TTFA stays unmeasured.
func (s *stream) startOnset() {
	if s.f.BitsPerSample != 16 {
		s.onsetDone = true
		return
	}
	cfg := onset.Config{SampleRate: s.f.SampleRate, Channels: s.f.Channels, ThresholdDBFS: s.audibleDB, Window: s.audibleWindow}
	if s.det == nil {
		d, err := onset.New(cfg)
		if err != nil {
			// Options were validated in New; a format onset refuses
			// (more than 64 channels) leaves TTFA unmeasured.
			s.onsetDone = true
			return
		}
		s.det = d
	} else if s.det.Reset(cfg) != nil {
		s.onsetDone = true
		return
	}
	s.detecting = true
}

// onsetChunk feeds one chunk's PCM (already appended to the record's
// timeline) to the detector until the onset is found; then TTFA audible is
// the arrival of the chunk that holds the onset frame, which may be an
// earlier chunk than this one when the window spans chunks.
func (s *stream) onsetChunk(pcm []byte) {
	if !s.detecting || s.onsetDone || !s.det.Write(pcm) {
		return
	}
	s.onsetDone = true
	frame, _ := s.det.Onset()
	rec := s.rec
	at := frame * int64(s.f.BytesPerFrame())
	var cum int64
	for k, n := range rec.ChunkBytes {
		cum += int64(n)
		if cum > at {
			rec.TTFAAudibleS = rec.ChunkArrivalsS[k]
			break
		}
	}
	silence := float64(frame) / float64(s.f.SampleRate)
	rec.LeadingSilenceS = &silence
}

// finishOnset records, for a response whose audio never became audible,
// its whole duration as leading silence (TTFAAudibleS stays 0).
func (s *stream) finishOnset() {
	if !s.detecting || s.rec.LeadingSilenceS != nil {
		return
	}
	silence := float64(s.det.Frames()) / float64(s.f.SampleRate)
	s.rec.LeadingSilenceS = &silence
}

// flacEvent measures one FLAC chat audio event. Its frames come from its
// STREAMINFO header; when the file can be decoded quietly its PCM goes
// through the usual chunk path (onset, --save-audio). Otherwise the chunk
// counts its PCM-equivalent bytes (frames x 2 x channels) for the timeline
// and continuity, and the response gets no audible onset: an onset taken
// from audio that was never decoded would be a guess.
func (s *stream) flacEvent(data []byte, field string, now time.Time) error {
	info, first, err := flacfile.ParseHeader(data)
	if err != nil {
		return fail(results.ErrMalformed, "event %d: %s: bad FLAC: %w", s.events, field, err)
	}
	if info.Frames <= 0 || info.Frames > flacfile.MaxFrames {
		return fail(results.ErrMalformed, "event %d: %s: FLAC STREAMINFO states %d samples per channel (want 1 to %d)", s.events, field, info.Frames, int64(flacfile.MaxFrames))
	}
	if flacfile.Decodable(data, first) {
		_, f, p, err := flacfile.Decode(data, s.flacPCM[:0])
		if err != nil {
			return fail(results.ErrMalformed, "event %d: %s: bad FLAC: %w", s.events, field, err)
		}
		s.flacPCM = p
		if err := s.setFormat(f); err != nil {
			return err
		}
		s.addChunk(now, p)
		return nil
	}
	f := wav.Format{SampleRate: info.Format.SampleRate, Channels: info.Format.Channels, BitsPerSample: 16}
	if err := s.setFormat(f); err != nil {
		return err
	}
	s.detecting, s.onsetDone = false, true
	s.addChunkBytes(now, int(info.Frames)*f.BytesPerFrame(), nil)
	return nil
}
