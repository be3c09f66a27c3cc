package client

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/omnibench/omnibench/internal/audio/input"
	"github.com/omnibench/omnibench/internal/run/results"
)

// Request describes one request to send.
type Request struct {
	// Kind is results.KindChat, results.KindSpeech or results.KindSpeechSSE.
	Kind string
	// Endpoint is the URL path to post to; empty means the kind's standard
	// path (/v1/chat/completions or /v1/audio/speech).
	Endpoint string
	Model    string // omitted from the body when empty
	Voice    string // top-level "voice"; omitted when empty
	// Prompt is the user message (chat) or the text to speak (speech "input").
	Prompt string
	// AudioFormat is "wav" (the default, as on the servers) or "pcm"
	// ("pcm16" means "pcm"). Chat sends it as audio.format, speech as
	// response_format. Other formats cannot be measured and are refused.
	AudioFormat string
	// Modalities is sent as "modalities" for chat when not empty.
	Modalities []string
	// ExtraBody is merged into the JSON body; its keys replace the
	// defaults (a shallow merge: "audio" replaces the whole audio object).
	ExtraBody map[string]any
	// Headers are added to the HTTP request. Authorization comes from
	// Options.APIKey when that is set.
	Headers map[string]string
	// PCMSampleRate is the sample rate of raw PCM (format pcm), which the
	// stream does not state; default 24000 (Qwen3-Omni, Qwen3-TTS). Raw PCM
	// is taken as s16le mono.
	PCMSampleRate int
	// InputAudio, when set, is the user's spoken question (chat): a content
	// part beside the text part (none when Prompt is empty), as
	// AudioInputStyle says.
	InputAudio *input.Clip
	// AudioInputStyle is "input_audio" (default: the OpenAI input_audio
	// part) or "audio_url" (an audio_url part with a data: URL).
	AudioInputStyle string
	// RefAudio, when set, is the voice to clone (speech): sent as a data:
	// URL in "ref_audio", with RefText as "ref_text" and task_type "Base"
	// unless ExtraBody sets a task_type.
	RefAudio *input.Clip
	RefText  string
	// AudioOut, when set, receives the PCM of every audio chunk in arrival
	// order (headers stripped), for saving what a listener would hear.
	AudioOut io.Writer
	// TextOut, when set, receives the response's text (chat), unescaped, in
	// arrival order: the reference a transcription of the audio is scored
	// against. A failing writer does not fail the request.
	TextOut io.Writer
}

// defaultPCMSampleRate is the rate of headerless PCM when the request does
// not set one.
const defaultPCMSampleRate = 24000

// Endpoint paths by kind.
const (
	chatPath   = "/v1/chat/completions"
	speechPath = "/v1/audio/speech"
)

// Validate reports whether the request can be sent. Do records a request
// that fails validation as results.ErrConnect ("request not sent: ...").
func (r Request) Validate() error {
	_, _, err := r.build()
	return err
}

// path is the endpoint path of the request's kind ("" for an unknown kind).
func (r Request) path() string {
	if r.Endpoint != "" {
		return r.Endpoint
	}
	switch r.Kind {
	case results.KindChat:
		return chatPath
	case results.KindSpeech, results.KindSpeechSSE:
		return speechPath
	}
	return ""
}

// normalizeFormat maps a format name to "wav" or "pcm" and reports whether
// omnibench can decode it.
func normalizeFormat(f string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(f)) {
	case "", "wav":
		return "wav", true
	case "pcm", "pcm16":
		return "pcm", true
	case "flac":
		return "flac", true // chat only: each event is a FLAC file (flac)
	case "mp3":
		return "mp3", true // chat only: each event is an MP3 file (mp3)
	case "opus":
		return "opus", true // chat only: each event is an Ogg Opus file (opus)
	}
	return f, false
}

// build returns the JSON body and the effective audio format (after
// ExtraBody, which may override it).
func (r Request) build() ([]byte, string, error) {
	if r.PCMSampleRate < 0 {
		return nil, "", fmt.Errorf("PCM sample rate %d must be >= 0", r.PCMSampleRate)
	}
	format, ok := normalizeFormat(r.AudioFormat)
	if !ok {
		return nil, "", fmt.Errorf("audio format %q cannot be measured; use wav, pcm or (chat) flac, mp3, opus", r.AudioFormat)
	}
	var content any // the chat user message
	switch r.Kind {
	case results.KindChat:
		var err error
		if content, err = r.userContent(); err != nil {
			return nil, "", err
		}
	case results.KindSpeech, results.KindSpeechSSE:
	default:
		return nil, "", fmt.Errorf("unknown request kind %q (want %s, %s or %s)", r.Kind, results.KindChat, results.KindSpeech, results.KindSpeechSSE)
	}
	if r.RefAudio != nil && r.Kind == results.KindChat {
		return nil, "", fmt.Errorf("ref_audio (voice cloning) applies to speech, not chat")
	}
	var body any
	if len(r.ExtraBody) == 0 {
		body = r.plainBody(format, content)
	} else {
		m := r.mergedBody(format, content)
		// ExtraBody may have replaced the format; measure what was asked for.
		var f any
		if r.Kind == results.KindChat {
			if audio, ok := m["audio"].(map[string]any); ok {
				if f = audio["format"]; f == nil {
					f = "wav" // the server's default
				}
			}
		} else {
			f = m["response_format"]
		}
		if s, isString := f.(string); isString {
			if format, ok = normalizeFormat(s); !ok {
				return nil, "", fmt.Errorf("extra body sets audio format %q, which cannot be measured; use wav or pcm", s)
			}
		}
		body = m
	}
	if (format == "flac" || format == "mp3" || format == "opus") && r.Kind != results.KindChat {
		return nil, "", fmt.Errorf("audio format %s is measured for chat only; %s streams are pcm or wav", format, r.Kind)
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, "", fmt.Errorf("encoding the request body: %w", err)
	}
	return b, format, nil
}

// The request bodies without ExtraBody, as structs whose fields are in the
// order of their JSON names: encoding/json writes a map's keys sorted, so
// these encode to the very bytes of mergedBody's map (TestPlainBodyIsTheMap
// and FuzzPlainBodyIsTheMap compare them) in a sixth of the time and with
// 3 allocations instead of 39 (BenchmarkRequestBody): a map's keys are
// sorted on every request, which with 5000 streams starting at once was 5 %
// of the client's CPU.
type (
	chatBody struct {
		Audio         chatAudio         `json:"audio"`
		Messages      [1]chatMessage    `json:"messages"`
		Modalities    []string          `json:"modalities,omitempty"`
		Model         string            `json:"model,omitempty"`
		Stream        bool              `json:"stream"`
		StreamOptions chatStreamOptions `json:"stream_options"`
		Voice         string            `json:"voice,omitempty"`
	}
	chatAudio struct {
		Format string `json:"format"`
	}
	chatMessage struct {
		Content any    `json:"content"`
		Role    string `json:"role"`
	}
	chatStreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	}
	speechBody struct {
		Input          string `json:"input"`
		Model          string `json:"model,omitempty"`
		RefAudio       string `json:"ref_audio,omitempty"`
		RefText        string `json:"ref_text,omitempty"`
		ResponseFormat string `json:"response_format"`
		Stream         bool   `json:"stream,omitempty"` // speech SSE
		StreamFormat   string `json:"stream_format"`
		TaskType       string `json:"task_type,omitempty"`
		Voice          string `json:"voice,omitempty"`
	}
)

// plainBody is the body of a request without ExtraBody; content is the
// chat user message.
func (r Request) plainBody(format string, content any) any {
	if r.Kind == results.KindChat {
		return chatBody{
			Audio:         chatAudio{Format: format},
			Messages:      [1]chatMessage{{Content: content, Role: "user"}},
			Modalities:    r.Modalities,
			Model:         r.Model,
			Stream:        true,
			StreamOptions: chatStreamOptions{IncludeUsage: true},
			Voice:         r.Voice,
		}
	}
	b := speechBody{Input: r.Prompt, Model: r.Model, ResponseFormat: format, StreamFormat: "audio", Voice: r.Voice}
	if r.Kind == results.KindSpeechSSE {
		b.Stream, b.StreamFormat = true, "sse"
	}
	if r.RefAudio != nil {
		b.RefAudio, b.RefText, b.TaskType = r.RefAudio.DataURL(), r.RefText, "Base"
	}
	return b
}

// asksForAudio reports whether the request asks for audio: speech always,
// chat when the modalities it sends (ExtraBody's replace Modalities) list
// "audio". Chat without modalities leaves the choice to the model's
// default, which may be text only, so it asks for nothing in particular.
func (r Request) asksForAudio() bool {
	if r.Kind != results.KindChat {
		return true
	}
	var mods any = r.Modalities
	if v, ok := r.ExtraBody["modalities"]; ok {
		mods = v
	}
	switch m := mods.(type) {
	case []string:
		return slices.Contains(m, "audio")
	case []any:
		return slices.Contains(m, any("audio"))
	}
	return false
}

// mergedBody is the body as a map, with ExtraBody merged into it.
func (r Request) mergedBody(format string, content any) map[string]any {
	body := map[string]any{}
	if r.Model != "" {
		body["model"] = r.Model
	}
	if r.Voice != "" {
		body["voice"] = r.Voice
	}
	switch r.Kind {
	case results.KindChat:
		body["messages"] = []map[string]any{{"role": "user", "content": content}}
		body["stream"] = true
		body["stream_options"] = map[string]any{"include_usage": true}
		body["audio"] = map[string]any{"format": format}
		if len(r.Modalities) > 0 {
			body["modalities"] = r.Modalities
		}
	case results.KindSpeech:
		body["input"] = r.Prompt
		body["response_format"] = format
		body["stream_format"] = "audio"
	case results.KindSpeechSSE:
		body["input"] = r.Prompt
		body["response_format"] = format
		body["stream"] = true
		body["stream_format"] = "sse"
	}
	if r.RefAudio != nil {
		body["ref_audio"] = r.RefAudio.DataURL()
		if r.RefText != "" {
			body["ref_text"] = r.RefText
		}
		body["task_type"] = "Base"
	}
	for k, v := range r.ExtraBody {
		body[k] = v
	}
	return body
}

// Chat audio input styles (Request.AudioInputStyle).
const (
	audioStyleInputAudio = "input_audio"
	audioStyleURL        = "audio_url"
)

// userContent is the user message's content: the prompt string, or with
// InputAudio an array of a text part (when there is text) and an audio part
// carrying the file byte for byte.
func (r Request) userContent() (any, error) {
	if r.InputAudio == nil {
		return r.Prompt, nil
	}
	var parts []map[string]any
	if r.Prompt != "" {
		parts = append(parts, map[string]any{"type": "text", "text": r.Prompt})
	}
	a := r.InputAudio
	switch r.AudioInputStyle {
	case "", audioStyleInputAudio:
		parts = append(parts, map[string]any{"type": "input_audio", "input_audio": map[string]any{"data": a.Base64, "format": a.Format}})
	case audioStyleURL:
		parts = append(parts, map[string]any{"type": "audio_url", "audio_url": map[string]any{"url": a.DataURL()}})
	default:
		return nil, fmt.Errorf("audio input style %q: want %s or %s", r.AudioInputStyle, audioStyleInputAudio, audioStyleURL)
	}
	return parts, nil
}

// inputAudio is the audio the request sends: seconds and file bytes of its
// question and reference clips.
func (r Request) inputAudio() (seconds float64, bytes int64) {
	for _, c := range []*input.Clip{r.InputAudio, r.RefAudio} {
		if c != nil {
			seconds += c.DurationS
			bytes += int64(c.Bytes)
		}
	}
	return seconds, bytes
}
