package simulator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
)

// This file serves WS /v1/audio/speech/stream as vLLM-Omni's
// OmniStreamingSpeechHandler does (docs/reference/websocket.md, section 2): a
// session.config first, then input.text messages buffered until input.done
// flushes them as one TTS request (one utterance), strictly one at a time
// inside the receive loop, until session.close or a timeout.

// Limits of the speech stream's messages, in code points (9.2.7).
const (
	speechMaxMessageRunes = 4 << 20   // any message
	speechMaxInputRunes   = 128 << 10 // any message but session.config
	// speechNominalRate is the sample_rate audio.start states in PCM
	// streaming mode: hard-coded upstream, not the model's rate.
	speechNominalRate = 24000
)

// speechSessionConfig is StreamingSpeechSessionConfig: every field optional,
// unknown fields ignored, a wrong type rejected.
type speechSessionConfig struct {
	Type             string    `json:"type"`
	Model            *string   `json:"model"`
	Voice            *string   `json:"voice"`
	Speaker          *string   `json:"speaker"`
	TaskType         *string   `json:"task_type"`
	Language         *string   `json:"language"`
	Instructions     *string   `json:"instructions"`
	ResponseFormat   *string   `json:"response_format"`
	Speed            *float64  `json:"speed"`
	MaxNewTokens     *int      `json:"max_new_tokens"`
	InitialChunk     *int      `json:"initial_codec_chunk_frames"`
	NonStreamingMode *bool     `json:"non_streaming_mode"`
	RefAudio         *string   `json:"ref_audio"`
	RefText          *string   `json:"ref_text"`
	XVectorOnly      *bool     `json:"x_vector_only_mode"`
	SpeakerEmbedding []float64 `json:"speaker_embedding"`
	StreamAudio      bool      `json:"stream_audio"`
	WordTimestamps   bool      `json:"word_timestamps"`
}

// speechSession is the validated configuration in force.
type speechSession struct {
	model          string
	voice          string
	format         string // wav, pcm, flac, mp3, opus
	speed          float64
	streamAudio    bool
	wordTimestamps bool
	bothRefs       bool    // speaker_embedding with ref_audio: fails when a request is built
	refS           float64 // seconds of the voice-cloning reference (ref_audio), decoded
}

// parseSpeechSessionConfig validates a session.config message; the error
// text is what follows "Invalid session config: ".
func (s *Server) parseSpeechSessionConfig(data []byte) (*speechSession, error) {
	var b speechSessionConfig
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, err
	}
	sess := &speechSession{voice: DefaultVoice, format: "wav", speed: 1, streamAudio: b.StreamAudio, wordTimestamps: b.WordTimestamps}
	if b.Model != nil {
		sess.model = *b.Model
	}
	switch {
	case b.Voice != nil:
		sess.voice = *b.Voice
	case b.Speaker != nil:
		sess.voice = *b.Speaker
	}
	if b.TaskType != nil {
		switch *b.TaskType {
		case "CustomVoice", "VoiceDesign", "Base":
		default:
			return nil, fmt.Errorf("task_type: Input should be 'CustomVoice', 'VoiceDesign' or 'Base' [input_value=%q]", *b.TaskType)
		}
	}
	if b.ResponseFormat != nil {
		if !strings.Contains(" wav pcm flac mp3 opus ", " "+*b.ResponseFormat+" ") {
			return nil, fmt.Errorf("response_format: Input should be 'wav', 'pcm', 'flac', 'mp3' or 'opus' [input_value=%q]", *b.ResponseFormat)
		}
		sess.format = *b.ResponseFormat
	}
	if b.Speed != nil {
		if !(*b.Speed >= 0.25 && *b.Speed <= 4) {
			return nil, fmt.Errorf("speed: Input should be between 0.25 and 4.0 [input_value=%v]", *b.Speed)
		}
		sess.speed = *b.Speed
	}
	if b.MaxNewTokens != nil && *b.MaxNewTokens < 1 {
		return nil, fmt.Errorf("max_new_tokens: Input should be greater than or equal to 1 [input_value=%d]", *b.MaxNewTokens)
	}
	if b.InitialChunk != nil && *b.InitialChunk < 0 {
		return nil, fmt.Errorf("initial_codec_chunk_frames: Input should be greater than or equal to 0 [input_value=%d]", *b.InitialChunk)
	}
	if len(b.SpeakerEmbedding) > 8192 {
		return nil, fmt.Errorf("speaker_embedding: List should have at most 8192 items after validation, not %d", len(b.SpeakerEmbedding))
	}
	if sess.streamAudio && sess.format != "pcm" {
		return nil, fmt.Errorf("Value error, WebSocket stream_audio=true requires response_format='pcm', got '%s'", sess.format)
	}
	if sess.streamAudio && sess.speed != 1 {
		return nil, errors.New("Value error, WebSocket stream_audio=true currently requires speed=1.0; speed adjustment is not supported for progressive PCM")
	}
	sess.bothRefs = len(b.SpeakerEmbedding) > 0 && b.RefAudio != nil
	if b.RefAudio != nil && !sess.bothRefs {
		d, e := decodeAudioURL("ref_audio", "ref_audio", *b.RefAudio)
		if e != nil {
			return nil, e
		}
		sess.refS = d
	}
	return sess, nil
}

// speechStreamConn is one connection's state.
type speechStreamConn struct {
	s         *Server
	ctx       context.Context
	c         *websocket.Conn
	cfg       *speechSession // nil until a valid session.config
	buf       strings.Builder
	utterance int // utterance_index of the next flush
}

func (s *Server) handleSpeechStream(w http.ResponseWriter, r *http.Request) {
	s.serveWS(w, r, func(ctx context.Context, c *websocket.Conn) {
		sc := &speechStreamConn{s: s, ctx: ctx, c: c}
		if sc.serve(pumpMessages(ctx, c)) {
			// The handler returned: the ASGI server closes the socket
			// (1000).
			_ = c.Close(websocket.StatusNormalClosure, "")
		}
	})
}

// serve runs the receive loop; it reports whether the connection should
// still be closed cleanly (false when it is already gone or was closed).
func (sc *speechStreamConn) serve(msgs <-chan wsMessage) bool {
	for {
		timeout := sc.s.cfg.WS.SpeechIdleTimeout
		if sc.cfg == nil {
			timeout = sc.s.cfg.WS.SpeechConfigTimeout
		}
		m := nextMessage(sc.ctx, msgs, timeout)
		var to errWSTimeout
		switch {
		case errors.As(m.err, &to) && sc.cfg == nil:
			sc.sendError("Timeout waiting for session.config")
			return true
		case errors.As(m.err, &to):
			sc.sendError("Idle timeout: no message received")
			return true
		case m.err != nil:
			return false // the client left (or closed)
		}
		if m.typ != websocket.MessageText {
			// Starlette's receive_text() fails on a binary frame.
			sc.sendError("Internal error: 'text'")
			return true
		}
		cont, open := sc.message(m.data)
		if !cont {
			return open
		}
	}
}

// message handles one text message; cont is false when the session ends,
// open then says whether to close the socket cleanly.
func (sc *speechStreamConn) message(data []byte) (cont, open bool) {
	// Before a config is accepted every rejection is fatal.
	reject := func(msg string) (bool, bool) {
		sc.sendError(msg)
		return sc.cfg != nil, true
	}
	runes := utf8.RuneCount(data)
	if runes > speechMaxMessageRunes {
		return reject("WebSocket message too large")
	}
	var head struct {
		Type string `json:"type"`
	}
	dec := bytes.TrimSpace(data)
	if !json.Valid(dec) {
		return reject("Invalid JSON message")
	}
	if len(dec) == 0 || dec[0] != '{' {
		return reject("WebSocket messages must be JSON objects")
	}
	if json.Unmarshal(dec, &head) != nil {
		// "type" is not a string: it names no known message.
		head.Type = string(firstValue(dec, "type"))
	}
	if head.Type != "session.config" && runes > speechMaxInputRunes {
		return reject("input.text message too large")
	}
	if sc.cfg == nil && head.Type != "session.config" {
		sc.sendError("Expected session.config, got: " + head.Type)
		return false, true
	}
	switch head.Type {
	case "session.config":
		if sc.buf.Len() > 0 {
			sc.sendError("session.config cannot be applied while input is buffered; send input.done first")
			return true, true
		}
		cfg, err := sc.s.parseSpeechSessionConfig(dec)
		if err != nil {
			return reject("Invalid session config: " + err.Error())
		}
		if cfg.model != "" {
			if e := sc.s.checkModel(cfg.model); e != nil {
				return reject(fmt.Sprintf("error=ErrorInfo(message='%s', type='NotFoundError', param='model', code=404)", e.Message))
			}
		}
		sc.cfg = cfg
	case "input.text":
		var t struct {
			Text *json.RawMessage `json:"text"`
		}
		_ = json.Unmarshal(dec, &t) // valid JSON object: cannot fail
		var text string
		if t.Text != nil && string(*t.Text) != "null" {
			if json.Unmarshal(*t.Text, &text) != nil {
				sc.sendError("input.text requires a string value")
				return true, true
			}
		}
		sc.buf.WriteString(text)
	case "input.done":
		return sc.flush()
	case "session.close":
		_ = sc.c.Close(websocket.StatusNormalClosure, "")
		return false, false
	default:
		sc.sendError("Unknown message type: " + head.Type)
	}
	return true, true
}

// firstValue returns the raw JSON of an object's member, for naming a
// non-string type in an error.
func firstValue(obj []byte, key string) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return nil
	}
	return m[key]
}

func (sc *speechStreamConn) sendError(msg string) {
	_ = writeJSONWS(sc.ctx, sc.c, map[string]string{"type": "error", "message": msg})
}

func (sc *speechStreamConn) send(v any) error { return writeJSONWS(sc.ctx, sc.c, v) }

type speechAudioStart struct {
	Type           string `json:"type"`
	UtteranceIndex int    `json:"utterance_index"`
	SentenceIndex  int    `json:"sentence_index"`
	SentenceText   string `json:"sentence_text"`
	Format         string `json:"format"`
	SampleRate     int    `json:"sample_rate,omitempty"`
	WordTimestamps bool   `json:"word_timestamps,omitempty"`
}

type speechAudioChunk struct {
	Type           string          `json:"type"`
	UtteranceIndex int             `json:"utterance_index"`
	SentenceIndex  int             `json:"sentence_index"`
	ChunkID        int             `json:"chunk_id"`
	ChunkStartMS   int64           `json:"chunk_start_ms"`
	ChunkEndMS     int64           `json:"chunk_end_ms"`
	SampleRate     int             `json:"sample_rate"`
	AudioB64       string          `json:"audio_b64"`
	Timestamps     json.RawMessage `json:"timestamps"`
}

type speechAudioDone struct {
	Type           string `json:"type"`
	UtteranceIndex int    `json:"utterance_index"`
	SentenceIndex  int    `json:"sentence_index"`
	TotalBytes     int64  `json:"total_bytes"`
	Error          bool   `json:"error"`
}

type speechSessionDone struct {
	Type           string `json:"type"`
	UtteranceIndex int    `json:"utterance_index"`
	TotalSentences int    `json:"total_sentences"`
}

// flush synthesizes the buffered text as utterance sc.utterance (9.2.5).
func (sc *speechStreamConn) flush() (cont, open bool) {
	idx := sc.utterance
	sc.utterance++ // empty flushes count too
	text := strings.TrimSpace(sc.buf.String())
	sc.buf.Reset()
	done := func(sentences int) (bool, bool) {
		if err := sc.send(speechSessionDone{"session.done", idx, sentences}); err != nil {
			return false, false
		}
		return true, true
	}
	if text == "" {
		return done(0)
	}
	cfg := sc.cfg
	if cfg.wordTimestamps && sc.s.cfg.WS.NoForcedAligner {
		sc.sendError("word_timestamps=true but the server was launched without --forced-aligner; restart with --forced-aligner or disable word_timestamps")
		return done(1)
	}
	if cfg.wordTimestamps && (!cfg.streamAudio || cfg.format != "pcm") {
		sc.sendError("word_timestamps=true requires stream_audio=true and response_format='pcm'")
		return done(1)
	}
	if cfg.bothRefs {
		// Raised while the request is built, outside the try block: fatal.
		sc.sendError("Internal error: speaker_embedding and ref_audio are mutually exclusive")
		return false, true
	}
	start := speechAudioStart{Type: "audio.start", UtteranceIndex: idx, SentenceText: text, Format: cfg.format, WordTimestamps: cfg.wordTimestamps}
	if cfg.streamAudio && cfg.format == "pcm" {
		start.SampleRate = speechNominalRate
	}
	if err := sc.send(start); err != nil {
		return false, false
	}
	total, genErr, gone := sc.generate(idx, text)
	if gone {
		return false, false
	}
	if genErr != "" {
		sc.sendError(fmt.Sprintf("Generation failed for utterance %d, sentence 0: %s", idx, genErr))
	}
	if err := sc.send(speechAudioDone{"audio.done", idx, 0, total, genErr != ""}); err != nil {
		return false, false
	}
	return done(1)
}

// generate runs one utterance's job and sends its audio. It returns the
// audio bytes sent, the generation failure ("" when none) and whether the
// connection is gone (the client left, or the disconnect fault struck).
func (sc *speechStreamConn) generate(idx int, text string) (total int64, genErr string, gone bool) {
	s, cfg := sc.s, sc.cfg
	speed := cfg.speed
	if cfg.streamAudio {
		speed = 1
	}
	j := s.newJob(sc.ctx, time.Now(), jobSpec{
		endpoint:  "speech",
		key:       text,
		audioOn:   true,
		audioText: text,
		voice:     cfg.voice,
		speed:     speed,
		promptTok: promptTokens(utf8.RuneCountInString(text)) + audioPromptTokens(cfg.refS),
		audioInS:  cfg.refS,
	})
	defer j.release()
	// Every utterance of this endpoint is a speech stream to the server's
	// speech-stream metrics, file mode too: its one binary frame is its
	// first and only PCM payload.
	sm := s.newSpeechStreamMetrics(j)
	if j.plan.faults.http500 {
		sm.aborted(omnimetrics.SpeechAbortError)
		j.fail()
		return 0, "simulated internal server error (fault injection: --fault-500)", false
	}
	if !cfg.streamAudio && cfg.format != "wav" && cfg.format != "pcm" {
		sm.aborted(omnimetrics.SpeechAbortError)
		j.fail()
		return 0, fmt.Sprintf("the simulator does not encode %s; use wav or pcm", cfg.format), false
	}
	rate := s.cfg.SampleRate
	var pcm []byte
	chunkID := 0
	var framesSent int64
	err := j.run(func(ev *event) error {
		switch {
		case cfg.wordTimestamps:
			pcm = j.render(pcm[:0], ev)
			startMS := framesMS(framesSent, rate)
			framesSent += int64(ev.frames)
			b64 := string(appendBase64(nil, pcm, ev.corrupt))
			total += int64(len(pcm))
			sm.payload(len(pcm))
			chunk := speechAudioChunk{Type: "audio.chunk", UtteranceIndex: idx, ChunkID: chunkID, ChunkStartMS: startMS,
				ChunkEndMS: framesMS(framesSent, rate), SampleRate: rate, AudioB64: b64, Timestamps: json.RawMessage("null")}
			chunkID++
			return sc.send(chunk)
		case cfg.streamAudio:
			pcm = j.render(pcm[:0], ev)
			total += int64(len(pcm))
			sm.payload(len(pcm))
			return writeWS(sc.ctx, sc.c, websocket.MessageBinary, pcm)
		default:
			pcm = j.render(pcm, ev) // the whole file goes out at the end
			return nil
		}
	})
	if err != nil {
		sm.aborted(abortReason(err))
	}
	switch {
	case err == nil:
	case errors.Is(err, errFaultEvent):
		j.fail()
		return total, "simulated generation error (fault injection: --fault-error-event)", false
	case errors.Is(err, errFaultDisconnect):
		j.fail()
		sc.c.CloseNow()
		return total, "", true
	default:
		j.fail()
		return total, "", true
	}
	if !cfg.wordTimestamps && !cfg.streamAudio {
		sm.payload(len(pcm)) // file mode: the whole file is the one payload
	}
	n, err := sc.closeUtterance(idx, text, pcm, framesSent, chunkID)
	total += n // file mode: nothing streamed before, the file is the utterance's bytes
	if err != nil {
		sm.aborted(omnimetrics.SpeechAbortClientGone)
		j.fail()
		return total, "", true
	}
	sm.completed()
	j.succeed()
	return total, "", false
}

// closeUtterance sends what ends an utterance after its audio events: the
// closing chunk with the word alignment (word timestamps), or the whole
// file (file mode), whose size it returns; nothing when the audio streamed.
func (sc *speechStreamConn) closeUtterance(idx int, text string, pcm []byte, framesSent int64, chunkID int) (fileBytes int64, err error) {
	cfg, rate := sc.cfg, sc.s.cfg.SampleRate
	switch {
	case cfg.wordTimestamps:
		// The closing chunk carries the word alignment of the sentence.
		end := framesMS(framesSent, rate)
		ts, _ := json.Marshal(wordTimes(text, end))
		return 0, sc.send(speechAudioChunk{Type: "audio.chunk", UtteranceIndex: idx, ChunkID: chunkID, ChunkEndMS: end,
			SampleRate: rate, Timestamps: ts})
	case !cfg.streamAudio:
		file := pcm
		if cfg.format == "wav" {
			file = wav.Encode(sc.s.wavFormat(), pcm)
		}
		return int64(len(file)), writeWS(sc.ctx, sc.c, websocket.MessageBinary, file)
	}
	return 0, nil
}

// framesMS is a frame count as whole milliseconds (bytes/2/rate, rounded).
func framesMS(frames int64, rate int) int64 {
	return int64(math.Round(float64(frames) * 1000 / float64(rate)))
}

type wordTime struct {
	Word    string `json:"word"`
	StartMS int64  `json:"start_ms"`
	EndMS   int64  `json:"end_ms"`
}

// wordTimes spreads the words over the sentence in proportion to their
// length, as a forced aligner would place evenly spoken words.
func wordTimes(text string, endMS int64) []wordTime {
	words := strings.Fields(text)
	out := make([]wordTime, 0, len(words))
	total := 0
	for _, w := range words {
		total += utf8.RuneCountInString(w)
	}
	at := 0
	for _, w := range words {
		n := utf8.RuneCountInString(w)
		out = append(out, wordTime{Word: w, StartMS: int64(at) * endMS / int64(total), EndMS: int64(at+n) * endMS / int64(total)})
		at += n
	}
	return out
}
