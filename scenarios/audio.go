package scenarios

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/omnibench/omnibench/internal/audio/input"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/wsclient"
)

// Caps on the audio a prompt set may carry: it is read into memory (and
// base64-encoded, 4/3 of its size) once at start-up. 16 MiB a file keeps a
// request body under the 32 MiB the simulator (and many proxies) accept.
const (
	MaxAudioFileBytes  = 16 << 20
	MaxAudioTotalBytes = 128 << 20
	MaxAudioDirFiles   = 10000
)

// Prompt is one entry of a prompt set: text, audio, or both, and for
// speech voice cloning a reference clip with its transcript. Clips are
// shared read-only between requests.
type Prompt struct {
	Text     string
	Audio    *input.Clip // the user's spoken question (chat)
	RefAudio *input.Clip // voice-cloning reference (speech)
	RefText  string      // transcript of RefAudio

	File string // the prompt file (or audio file) it came from
	Line int    // its line in File; 0 for an audio file of a directory
}

// maxWSConfigAudio is the base64 a speech-ws session.config can carry:
// the server refuses messages over 4 MiB (protocol notes, vllm-omni-
// websocket.md), less 64 KiB for the other fields.
const maxWSConfigAudio = 4<<20 - 64<<10

// audioExts are the file names a directory prompt set picks up.
func audioExts() []string { return []string{".wav", ".flac", ".mp3"} }

// audioBudget counts the audio bytes a prompt set has read against
// MaxAudioTotalBytes.
type audioBudget struct{ used int64 }

// readClip reads one audio file (at most MaxAudioFileBytes) with open and
// measures it. name is the path shown in errors.
func (b *audioBudget) readClip(open func() (io.ReadCloser, error), name string) (*input.Clip, error) {
	f, err := open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxAudioFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(data) > MaxAudioFileBytes {
		return nil, fmt.Errorf("%s: larger than the %d MiB cap on one audio file", name, MaxAudioFileBytes>>20)
	}
	if b.used += int64(len(data)); b.used > MaxAudioTotalBytes {
		return nil, fmt.Errorf("%s: the prompt set's audio exceeds the %d MiB cap on all audio files", name, MaxAudioTotalBytes>>20)
	}
	c, err := input.NewClip(name, data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

// diskClip reads an audio file named in a prompt file: a relative path is
// taken from the prompt file's directory.
func (b *audioBudget) diskClip(promptFile, p string) (*input.Clip, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(promptFile), p)
	}
	return b.readClip(func() (io.ReadCloser, error) { return os.Open(p) }, p)
}

// loadAudioDir makes a prompt set of the audio files (by extension) in a
// directory of fsys, in name order: each is one prompt without text. label
// names the directory in messages.
func loadAudioDir(fsys fs.FS, dir, label string) ([]Prompt, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("prompts: %w", err)
	}
	var b audioBudget
	var set []Prompt
	for _, e := range entries {
		if e.IsDir() || !slices.Contains(audioExts(), strings.ToLower(path.Ext(e.Name()))) {
			continue
		}
		if len(set) == MaxAudioDirFiles {
			return nil, &PositionError{File: label, Msg: fmt.Sprintf("more than %d audio files", MaxAudioDirFiles)}
		}
		name := path.Join(dir, e.Name())
		shown := filepath.Join(label, e.Name())
		c, err := b.readClip(func() (io.ReadCloser, error) { return fsys.Open(name) }, shown)
		if err != nil {
			return nil, &PositionError{File: shown, Msg: unwrapName(err, shown)}
		}
		set = append(set, Prompt{Audio: c, File: shown})
	}
	if len(set) == 0 {
		return nil, &PositionError{File: label, Msg: fmt.Sprintf("no audio files (%s) in the directory", strings.Join(audioExts(), ", "))}
	}
	return set, nil
}

// unwrapName drops a leading "name: " from a message that goes into a
// PositionError already naming the file.
func unwrapName(err error, name string) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	return strings.TrimPrefix(err.Error(), name+": ")
}

// checkPromptsForKind refuses prompt entries a request kind cannot send:
// speech needs text (the words to say) and takes no question audio; chat
// takes no voice-cloning reference.
func checkPromptsForKind(kind string, set []Prompt) error {
	for _, p := range set {
		at := func(field, msg string) error {
			return &PositionError{File: p.File, Line: p.Line, Field: field, Msg: msg}
		}
		switch kind {
		case results.KindChat:
			if p.RefAudio != nil || p.RefText != "" {
				return at("ref_audio", "voice cloning (ref_audio, ref_text) applies to speech kinds, not chat; use \"audio\" for a spoken question")
			}
		case results.KindRealtime:
			if p.Audio != nil || p.RefAudio != nil {
				field := "audio"
				if p.Audio == nil {
					field = "ref_audio"
				}
				return at(field, "the realtime kind sends text turns; spoken input (realtime-audio) and voice cloning are not supported on it yet")
			}
		case results.KindRealtimeAudio:
			switch {
			case p.RefAudio != nil || p.RefText != "":
				return at("ref_audio", "realtime-audio sends the question's speech only; voice cloning (ref_audio, ref_text) is not part of plain /v1/realtime")
			case p.Audio == nil:
				return at("audio", "realtime-audio sends speech: every prompt needs an \"audio\" file (16 kHz mono PCM16 WAV); try --prompts builtin:voice")
			}
			if _, err := wsclient.InputPCM(p.Audio); err != nil {
				return at("audio", err.Error())
			}
		case results.KindSpeech, results.KindSpeechSSE, results.KindSpeechWS:
			if p.Audio != nil {
				return at("audio", "a speech request speaks text and takes no question audio; use \"ref_audio\" for a voice to clone")
			}
			if strings.TrimSpace(p.Text) == "" {
				return at("prompt", "a speech request needs the text to speak")
			}
			if kind == results.KindSpeechWS && p.RefAudio != nil && len(p.RefAudio.Base64) > maxWSConfigAudio {
				return at("ref_audio", fmt.Sprintf("%s: %d bytes of base64, too large for speech-ws, whose server refuses a session.config over 4 MiB; use a shorter clip (about 3 MiB of file at most) or an HTTP speech kind", p.RefAudio.Name, len(p.RefAudio.Base64)))
			}
		}
	}
	return nil
}

// texts is the text of every prompt ("" for audio-only ones).
func texts(set []Prompt) []string {
	out := make([]string, len(set))
	for i, p := range set {
		out[i] = p.Text
	}
	return out
}

// textSet wraps text prompts as a prompt set (nil when ps is nil).
func textSet(file string, ps []string) []Prompt {
	if ps == nil {
		return nil
	}
	set := make([]Prompt, len(ps))
	for i, p := range ps {
		set[i] = Prompt{Text: p, File: file}
	}
	return set
}

// jsonlPrompt is one line of a JSONL prompt file. Other fields are ignored.
type jsonlPrompt struct {
	Prompt   *string `json:"prompt"`
	Audio    *string `json:"audio"`
	RefAudio *string `json:"ref_audio"`
	RefText  *string `json:"ref_text"`
}

// parseJSONLSet reads one JSON object per line: "prompt" (text), "audio"
// (path of a WAV, FLAC or MP3 file: the spoken question), or both;
// "ref_audio" and "ref_text" (a voice to clone and its transcript).
// Relative paths are taken from file's directory. Blank lines are skipped.
func parseJSONLSet(file string, r io.Reader) ([]Prompt, error) {
	var set []Prompt
	var budget audioBudget
	err := eachLine(file, r, func(line int, text string) error {
		if strings.TrimSpace(text) == "" {
			return nil
		}
		at := func(field, msg string) error { return &PositionError{File: file, Line: line, Field: field, Msg: msg} }
		var rec jsonlPrompt
		if err := json.Unmarshal([]byte(text), &rec); err != nil {
			return at("", fmt.Sprintf("want a JSON object with a \"prompt\" string and/or an \"audio\" path: %v", err))
		}
		p := Prompt{File: file, Line: line}
		switch {
		case rec.Prompt == nil && rec.Audio == nil:
			return at("prompt", "missing (a line needs \"prompt\" text, an \"audio\" file or both)")
		case rec.Prompt != nil && strings.TrimSpace(*rec.Prompt) == "":
			return at("prompt", "empty")
		case rec.Prompt != nil:
			p.Text = *rec.Prompt
		}
		clip := func(field string, v *string) (*input.Clip, error) {
			if v == nil {
				return nil, nil
			}
			if strings.TrimSpace(*v) == "" {
				return nil, at(field, "empty path")
			}
			c, err := budget.diskClip(file, *v)
			if err != nil {
				return nil, at(field, err.Error())
			}
			return c, nil
		}
		var err error
		if p.Audio, err = clip("audio", rec.Audio); err != nil {
			return err
		}
		if p.RefAudio, err = clip("ref_audio", rec.RefAudio); err != nil {
			return err
		}
		if rec.RefText != nil {
			if rec.RefAudio == nil {
				return at("ref_text", "given without ref_audio (the transcript of which clip?)")
			}
			p.RefText = *rec.RefText
		}
		set = append(set, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(set) == 0 {
		return nil, &PositionError{File: file, Msg: "no prompts (every line is blank)"}
	}
	return set, nil
}

// How a chat request carries a prompt's audio. Both are accepted by
// vLLM-Omni.
const (
	// AudioStyleInputAudio is the OpenAI input_audio content part:
	// {"type":"input_audio","input_audio":{"data":<base64>,"format":"wav"}}.
	AudioStyleInputAudio = "input_audio"
	// AudioStyleURL is an audio_url content part with a data: URL:
	// {"type":"audio_url","audio_url":{"url":"data:audio/wav;base64,..."}}.
	AudioStyleURL = "audio_url"
)

// AudioInputStyles lists the styles; "" means AudioStyleInputAudio.
func AudioInputStyles() []string { return []string{AudioStyleInputAudio, AudioStyleURL} }

func checkAudioInputStyle(s string) error {
	if s == "" || slices.Contains(AudioInputStyles(), s) {
		return nil
	}
	return fmt.Errorf("must be %s (got %q)", strings.Join(AudioInputStyles(), " or "), s)
}

// checkCloning refuses voice-cloning prompts under an extra_body task_type
// other than Base: Qwen3-TTS clones a voice only in its Base task, and the
// request would otherwise measure a different task than the prompts say.
//
// It also refuses extra_body.ref_audio or ref_text beside prompts that carry
// their own: extra_body would silently replace the prompt's clip.
func (s *Scenario) checkCloning(set []Prompt) error {
	for _, p := range set {
		if p.RefAudio == nil {
			continue
		}
		for _, k := range []string{"ref_audio", "ref_text"} {
			if _, ok := s.ExtraBody[k]; ok {
				return &PositionError{File: p.File, Line: p.Line, Field: "ref_audio",
					Msg: fmt.Sprintf("the prompt carries its own reference clip, and the scenario's extra_body.%s would replace it; remove one", k)}
			}
		}
	}
	tt, ok := s.ExtraBody["task_type"]
	if !ok || tt == "Base" {
		return nil
	}
	for _, p := range set {
		if p.RefAudio != nil {
			return &PositionError{File: p.File, Line: p.Line, Field: "ref_audio",
				Msg: fmt.Sprintf("voice cloning needs task_type Base, but the scenario's extra_body.task_type is %v (set it to Base or remove it)", tt)}
		}
	}
	return nil
}
