package simulator

import (
	"encoding/base64"
	"math"
	"strings"

	"github.com/omnibench/omnibench/internal/audio/input"
)

// audioTokensPerSecond turns input audio into prompt tokens: Qwen3-Omni's
// audio encoder and Qwen3-TTS-12Hz's speech tokenizer both run at 12.5
// tokens per second of audio (an assumption from the model cards; the
// simulator only needs the order of magnitude).
const audioTokensPerSecond = 12.5

// audioPromptTokens is the prompt tokens of seconds of input audio.
func audioPromptTokens(seconds float64) int {
	return int(math.Ceil(seconds * audioTokensPerSecond))
}

// inputAudioFormats are the input_audio formats the simulator decodes.
func inputAudioFormats() []string { return input.Formats() }

// Input audio is checked the way a server that decodes it must: the bytes
// have to be WAV, FLAC or MP3 whatever the declared format says (vLLM hands
// the bytes to its audio loader and does not trust the label), and a WAV must
// parse. The real server's wording of these 400s is not in the reference
// notes; these messages are the simulator's own, in the OpenAI error object
// every other 400 uses (an assumption).

// decodeInputAudio checks an input_audio part's base64 data and returns
// its duration. where names the part ("messages[0].content[1]").
func decodeInputAudio(where, data, format string) (float64, *apiError) {
	if data == "" {
		return 0, badRequest("messages", "%s.input_audio.data: field required", where)
	}
	if format != "" && !contains(inputAudioFormats(), format) {
		return 0, badRequest("messages", "%s.input_audio.format: unsupported audio format '%s' (supported: %s)", where, format, strings.Join(inputAudioFormats(), ", "))
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return 0, badRequest("messages", "%s.input_audio.data: invalid base64: %v", where, err)
	}
	return inspectAudio("messages", where+".input_audio.data", b)
}

// decodeAudioURL checks an audio_url part (or a ref_audio field): only
// data: URLs, since the simulator fetches nothing.
func decodeAudioURL(param, where, url string) (float64, *apiError) {
	if url == "" {
		return 0, badRequest(param, "%s: field required", where)
	}
	if !strings.HasPrefix(url, "data:") {
		return 0, badRequest(param, "%s: the simulator accepts only data: URLs (it fetches nothing); got %.40q", where, url)
	}
	_, b, err := input.ParseDataURL(url)
	if err != nil {
		return 0, badRequest(param, "%s: %v", where, err)
	}
	return inspectAudio(param, where, b)
}

func inspectAudio(param, where string, b []byte) (float64, *apiError) {
	info, err := input.Inspect(b)
	if err != nil {
		return 0, badRequest(param, "%s: cannot decode audio: %v", where, err)
	}
	return info.DurationS, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
