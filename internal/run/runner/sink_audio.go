package runner

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/internal/run/results"
)

// audioSink writes each response's decoded audio as a playable WAV file
// named after the request id (--save-audio).
type audioSink struct {
	noClose
	dir           string
	log           io.Writer
	undecodedOnce sync.Once
}

func newAudioSink(dir string, log io.Writer) *audioSink {
	return &audioSink{dir: dir, log: log}
}

func (s *audioSink) add(rec *results.Record, audio *bytes.Buffer) error {
	if audio != nil && rec.HasAudio() && audio.Len() == 0 {
		// Measured from file headers, never decoded (Ogg Opus, MPEG 2.5
		// MP3, FLAC the decoder refuses): a WAV would be empty.
		s.undecodedOnce.Do(func() {
			fmt.Fprintf(s.log, "omnibench: --save-audio: response %s (and any other whose audio was measured from its file headers without being decoded: Ogg Opus, MPEG 2.5 MP3) has no decoded PCM; no WAV written for it\n", rec.ID)
		})
	} else if audio != nil && rec.HasAudio() {
		return saveAudio(s.dir, rec, audio.Bytes())
	}
	return nil
}

// saveAudio writes one response's PCM as a WAV file.
func saveAudio(dir string, rec *results.Record, pcm []byte) error {
	f := wav.Format{SampleRate: rec.SampleRate, Channels: rec.Channels, BitsPerSample: 8 * rec.SampleWidth}
	path := filepath.Join(dir, rec.ID+".wav")
	if err := os.WriteFile(path, wav.Encode(f, pcm), 0o644); err != nil {
		return fmt.Errorf("--save-audio: %w", err)
	}
	return nil
}
