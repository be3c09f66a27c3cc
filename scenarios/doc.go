// Package scenarios defines omnibench workloads: what to send (request kind,
// model, voice, audio format, prompts, extra body fields and headers) and the
// load and report defaults to send it with. Built-in scenarios are YAML files
// embedded in the binary; users can write their own in the same schema.
//
// # Schema
//
//	name: tts-short                  # [A-Za-z0-9._-]; defaults to the file name
//	description: one line for `omnibench scenarios`
//	kind: speech-sse                 # chat | speech | speech-sse (results.Kind*)
//	endpoint: /v1/audio/speech       # optional path override; default by kind
//	model: Qwen/Qwen3-TTS-12Hz-1.7B-CustomVoice   # optional; empty = omitted
//	voice: vivian                    # optional
//	audio_format: wav                # wav | pcm; default wav
//	modalities: [text, audio]        # chat only; text and/or audio; empty = server default
//	pcm_sample_rate: 24000           # Hz; required with audio_format pcm (PCM states no rate)
//	audio_input_style: input_audio   # chat: how a prompt's audio goes: input_audio | audio_url
//	prompts:
//	  source: builtin:short          # builtin:<set> or a file path (see below)
//	extra_body:                      # merged into every request body (JSON)
//	  task_type: CustomVoice
//	headers:                         # extra HTTP headers (no credentials: use --api-key)
//	  X-Request-Source: omnibench
//	load:                            # defaults; command-line flags override them
//	  concurrency: 4                 # closed-loop workers
//	  rate: 0                        # arrivals/s; > 0 = open loop
//	  arrival: poisson               # constant | poisson | gamma
//	  burstiness: 1                  # gamma shape
//	  requests: 100
//	  duration: 60s                  # Go duration
//	  warmup: 4
//	thresholds: [0.1]                # continuity (underrun) thresholds, seconds
//	slos: ["..."]                    # carried verbatim for the SLO checker
//	percentiles: [50, 90, 95, 99]    # percent, 0 < p <= 100
//
// Unknown fields are errors that name the file, line and field. Validation
// errors name the field (and, for files, its line).
//
// # Prompts
//
// Built-in prompt sets: short (one sentence), medium (two or three
// sentences), long (a paragraph), mixed (short + medium + long), questions
// (chat prompts) and voice (five spoken questions, 16 kHz WAV, made by
// prompts/voice/generate.sh). A prompt file is JSONL when its name ends in
// .jsonl or .ndjson and plain text otherwise (one prompt per line). Blank
// lines are skipped. A relative path in a scenario file is resolved against
// that file's directory when the file is loaded.
//
// A JSONL line holds "prompt" (text), "audio" (a WAV, FLAC or MP3 file: a
// spoken question, for chat), or both; and for speech voice cloning
// "ref_audio" (the voice to clone) and "ref_text" (its transcript). Other
// fields are ignored. Audio paths are relative to the prompt file. A
// directory is a prompt set of its audio files (.wav, .flac, .mp3, in name
// order; other files are ignored), one spoken prompt without text each.
//
// Audio is read, identified by its first bytes (not its name), measured
// and base64-encoded once, when the prompts load; requests share the
// encoded clips. A file is capped at MaxAudioFileBytes, a set at
// MaxAudioTotalBytes. A missing, unreadable or undecodable file is an error
// naming the prompt file and line (or the audio file).
//
// # Use
//
// Get or Load returns a *Scenario whose exported fields the caller may
// override (from flags) before calling Validate. Workload validates, loads
// the prompts and freezes a copy; its Request(seq, seed) builds the
// RequestSpec of request seq, choosing the prompt deterministically from seq
// and seed. Every RequestSpec owns its maps and slices, so requests built
// concurrently share no mutable state.
package scenarios
