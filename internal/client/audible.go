package client

import (
	"strings"
	"sync"
	"time"

	"github.com/omnibench/omnibench/internal/audio/audiocheck"
	"github.com/omnibench/omnibench/internal/audio/flac"
	"github.com/omnibench/omnibench/internal/audio/mp3"
	"github.com/omnibench/omnibench/internal/audio/onset"
	"github.com/omnibench/omnibench/internal/audio/opus"
	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/internal/run/results"
)

// Onset finds the audible onset of one response as its PCM arrives and
// fills the record's TTFAAudibleS and LeadingSilenceS. The HTTP kinds keep
// one per stream; other transports (package wsclient) keep one per session
// and feed it through Client.TrackOnset. The zero value is ready; its
// detector is reused across records.
type Onset struct {
	det *onset.Detector
	// pool is the Client's pool of detectors. A detector holds a window of
	// samples (about 2 KB at 24 kHz), which a stream needs only until its
	// onset is found, in its first events; after that it goes back to the
	// pool, so an open stream does not hold one.
	pool *sync.Pool
	rec  *results.Record
	f    wav.Format
	on   bool // the detector runs over rec's PCM
	done bool // the onset was found, or cannot be (not s16, not decoded)

	// The signal checks (Options.AudioChecks): checks is reused across
	// records (a few hundred bytes, kept by the stream or session);
	// checking is true while it runs over rec's PCM, until a chunk of it
	// is measured without being decoded.
	checks   *audiocheck.Analyzer
	checking bool
}

// TrackOnset feeds pcm, one chunk in format f that AddChunk has just
// appended to rec, to o; a record other than the last one restarts o.
func (c *Client) TrackOnset(o *Onset, rec *results.Record, f wav.Format, pcm []byte) {
	o.pool = &c.detectors
	if o.rec != rec {
		o.start(rec, f, c.opts.AudibleThresholdDBFS, c.opts.AudibleWindow, c.opts.AudioChecks)
	}
	o.chunk(pcm)
}

// start sets o up for rec's audio in format f. Only s16 PCM is analysed
// (the format every kind delivers); for other sample widths TTFA stays
// unmeasured.
func (o *Onset) start(rec *results.Record, f wav.Format, thresholdDBFS float64, window time.Duration, checks bool) {
	*o = Onset{det: o.det, pool: o.pool, checks: o.checks, rec: rec, f: f, done: true}
	if f.BitsPerSample != 16 {
		return
	}
	if checks {
		o.startChecks(f, thresholdDBFS)
	}
	cfg := onset.Config{SampleRate: f.SampleRate, Channels: f.Channels, ThresholdDBFS: thresholdDBFS, Window: window}
	if o.det == nil && o.pool != nil {
		o.det, _ = o.pool.Get().(*onset.Detector)
	}
	if o.det == nil {
		d, err := onset.New(cfg)
		if err != nil {
			// Options were validated in New; a format onset refuses
			// (more than 64 channels) leaves TTFA unmeasured.
			return
		}
		o.det = d
	} else if o.det.Reset(cfg) != nil {
		return
	}
	o.on, o.done = true, false
}

// startChecks sets the signal checks up for audio in format f, with the
// onset's gate as the silence gate.
func (o *Onset) startChecks(f wav.Format, gateDBFS float64) {
	cfg := audiocheck.Config{SampleRate: f.SampleRate, Channels: f.Channels, GateDBFS: gateDBFS}
	if o.checks == nil {
		a, err := audiocheck.New(cfg)
		if err != nil {
			return // a format the checks refuse (over 64 channels): unchecked
		}
		o.checks = a
	} else if o.checks.Reset(cfg) != nil {
		return
	}
	o.checking = true
}

// WantsPCM reports whether the record's onset detector or signal checks
// still need the samples of the chunks to come; when they do not (and no
// sink keeps the audio), a chunk can be measured from its length.
func (o *Onset) WantsPCM() bool { return o.wantsPCM() }

// wantsPCM reports whether the detector or the checks still need the
// samples of the chunks to come: the detector runs and has not found the
// onset, or the checks run.
func (o *Onset) wantsPCM() bool { return o.on && !o.done || o.checking }

// stop ends the analysis of the current record without an onset or a
// check: part of its audio was measured from a header without being
// decoded.
func (o *Onset) stop() {
	o.on, o.done, o.checking = false, true, false
	o.release()
}

// release gives the detector back to the pool once the record no longer
// needs it: the onset was found, or cannot be.
func (o *Onset) release() {
	if o.pool != nil && o.det != nil {
		o.pool.Put(o.det)
		o.det = nil
	}
}

// chunk feeds one chunk's PCM (already on the record's timeline) to the
// detector until the onset is found; then TTFA audible is the arrival of
// the chunk that holds the onset frame, which may be an earlier chunk than
// this one when the window spans chunks.
func (o *Onset) chunk(pcm []byte) {
	if o.checking {
		o.checks.Write(pcm)
	}
	if !o.on || o.done || !o.det.Write(pcm) {
		return
	}
	o.done = true
	frame, _ := o.det.Onset()
	o.release()
	rec := o.rec
	at := frame * int64(o.f.BytesPerFrame())
	var cum int64
	for k, n := range rec.ChunkBytes {
		cum += int64(n)
		if cum > at {
			rec.TTFAAudibleS = rec.ChunkArrivalsS[k]
			break
		}
	}
	silence := float64(frame) / float64(o.f.SampleRate)
	rec.LeadingSilenceS = &silence
}

// Finish records, for a response whose audio never became audible, its
// whole duration as leading silence (TTFAAudibleS stays 0). Call it before
// FinishAudio, for a record with audio.
//
// With Options.AudioChecks it also fills rec.Audio from the checks, when
// every chunk of the audio was decoded.
func (o *Onset) Finish(rec *results.Record) {
	if o.rec != rec {
		return
	}
	if o.checking {
		rec.Audio = audioCheck(o.checks.Report())
	}
	if !o.on || rec.LeadingSilenceS != nil {
		return
	}
	silence := float64(o.det.Frames()) / float64(o.f.SampleRate)
	rec.LeadingSilenceS = &silence
}

// audioCheck is the record's form of a signal-check report.
func audioCheck(r audiocheck.Report) *results.AudioCheck {
	c := &results.AudioCheck{
		PeakDBFS:     r.PeakDBFS,
		RMSDBFS:      r.RMSDBFS,
		ClippedShare: r.ClippedShare,
		DCOffset:     r.DCOffset,
		LongestGapS:  r.LongestInternalGap.Seconds(),
		GapsOver:     r.GapsOver,
		AbruptEnd:    r.AbruptEnd,
	}
	if r.Defects != 0 {
		c.Defects = strings.Split(r.Defects.String(), ",")
	}
	return c
}

// flacEvent measures one FLAC chat audio event. Its frames come from its
// STREAMINFO header; when the file can be decoded quietly its PCM goes
// through the usual chunk path (onset, --save-audio). Otherwise the chunk
// counts its PCM-equivalent bytes (frames x 2 x channels) for the timeline
// and continuity, and the response gets no audible onset: an onset taken
// from audio that was never decoded would be a guess.
func (s *stream) flacEvent(data []byte, field string, now time.Time) error {
	info, first, err := flac.ParseHeader(data)
	if err != nil {
		return fail(results.ErrMalformed, "event %d: %s: bad FLAC: %w", s.events, field, err)
	}
	if info.Frames <= 0 || info.Frames > flac.MaxFrames {
		return fail(results.ErrMalformed, "event %d: %s: FLAC STREAMINFO states %d samples per channel (want 1 to %d)", s.events, field, info.Frames, int64(flac.MaxFrames))
	}
	if flac.Decodable(data, first) {
		_, f, p, err := flac.Decode(data, s.flacPCM[:0])
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
	s.onset.stop()
	s.addChunkBytes(now, int(info.Frames)*f.BytesPerFrame(), nil)
	return nil
}

// mp3Event measures one MP3 chat audio event from its frame headers (and
// Xing/LAME tag); where go-mp3 can decode it (MPEG 1 and 2) its PCM goes
// through the usual chunk path (onset, --save-audio), otherwise it counts
// as header-measured audio without an onset, as in flacEvent.
func (s *stream) mp3Event(data []byte, field string, now time.Time) error {
	info, err := mp3.Parse(data)
	if err != nil {
		return fail(results.ErrMalformed, "event %d: %s: bad MP3: %w", s.events, field, err)
	}
	if err := s.setFormat(info.Format()); err != nil {
		return err
	}
	if mp3.Decodable(info) {
		p, err := mp3.Decode(data, info, s.flacPCM[:0])
		if err != nil {
			return fail(results.ErrMalformed, "event %d: %s: bad MP3: %w", s.events, field, err)
		}
		s.flacPCM = p
		s.addChunk(now, p)
		return nil
	}
	s.onset.stop()
	s.addChunkBytes(now, int(info.Frames)*info.Format().BytesPerFrame(), nil)
	return nil
}

// opusEvent measures one Ogg Opus chat audio event from its pages: samples
// at 48 kHz from the last granule position less the pre-skip, counted as
// frames at the input rate OpusHead states. No well-kept
// pure-Go Opus decoder exists, so the response's audible onset stays
// unmeasured (unknown, not silence) and --save-audio has no PCM of it.
func (s *stream) opusEvent(data []byte, field string, now time.Time) error {
	info, err := opus.Parse(data)
	if err != nil {
		return fail(results.ErrMalformed, "event %d: %s: bad Ogg Opus: %w", s.events, field, err)
	}
	// Opus always codes at 48 kHz; OpusHead states the rate the encoder's
	// input had, which for a server is its model's output rate, the rate
	// its audio_frames_total counts. The frames are counted at that rate
	// (rounded to a sample; the duration is the same), at 48 kHz when the
	// header states none.
	rate, frames := opus.Rate, info.Frames
	if info.InputRate >= 1000 && info.InputRate <= opus.Rate {
		rate = info.InputRate
		frames = (info.Frames*int64(rate) + opus.Rate/2) / opus.Rate
	}
	f := wav.Format{SampleRate: rate, Channels: info.Channels, BitsPerSample: 16}
	if err := s.setFormat(f); err != nil {
		return err
	}
	s.onset.stop()
	s.addChunkBytes(now, int(frames)*f.BytesPerFrame(), nil)
	return nil
}
