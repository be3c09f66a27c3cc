package main

import (
	"fmt"
	"net/url"
	"time"

	"github.com/spf13/pflag"

	"github.com/omnibench/omnibench/internal/run/runner"
)

// qualityFlags are the audio-quality flags: the signal checks of every
// response and the transcription of each measured response by an ASR
// server, scored as WER.
type qualityFlags struct {
	audioChecks    bool
	asrURL         string
	asrModel       string
	asrConcurrency int
	asrQueue       int
	asrMaxAudio    time.Duration
}

func (q *qualityFlags) addFlags(f *pflag.FlagSet) {
	f.BoolVar(&q.audioChecks, "audio-checks", false,
		"check every response's decoded audio (levels, clipping, internal gaps, abrupt end) and flag defects as audio_defect; keeps decoding after the onset, which costs client CPU per audio event")
	f.StringVar(&q.asrURL, "asr-url", "", "base `URL` of an OpenAI-compatible transcription server (POST /v1/audio/transcriptions): each measured response's audio is transcribed after it is measured and scored as WER against the text asked for (speech) or the response's text (chat)")
	f.StringVar(&q.asrModel, "asr-model", "", "model field of the transcription requests (e.g. openai/whisper-large-v3)")
	f.IntVar(&q.asrConcurrency, "asr-concurrency", runner.DefaultASRConcurrency, "transcriptions at once")
	f.IntVar(&q.asrQueue, "asr-queue", 0, "responses waiting for transcription; a response that finds the queue full is skipped and counted (0 = 8 x --asr-concurrency)")
	f.DurationVar(&q.asrMaxAudio, "asr-max-audio", runner.DefaultASRMaxAudio, "audio kept and sent per response for transcription, from its start")
}

// apply checks the flags and sets them on cfg.
func (q *qualityFlags) apply(cfg *runner.Config) error {
	cfg.Client.AudioChecks = q.audioChecks
	if q.asrURL == "" {
		return nil
	}
	if u, err := url.Parse(q.asrURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--asr-url %q: want an http:// or https:// base URL", q.asrURL)
	}
	switch {
	case q.asrConcurrency < 1:
		return fmt.Errorf("--asr-concurrency %d: must be at least 1", q.asrConcurrency)
	case q.asrQueue < 0:
		return fmt.Errorf("--asr-queue %d: must be 0 or more", q.asrQueue)
	case q.asrMaxAudio <= 0:
		return fmt.Errorf("--asr-max-audio %s: must be greater than 0", q.asrMaxAudio)
	}
	cfg.ASR = runner.ASRConfig{URL: q.asrURL, Model: q.asrModel, Concurrency: q.asrConcurrency, Queue: q.asrQueue, MaxAudio: q.asrMaxAudio}
	return nil
}
