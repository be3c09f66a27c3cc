package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/internal/tlsconf"
	"github.com/omnibench/omnibench/internal/wer"
	"github.com/omnibench/omnibench/scenarios"
)

// ASRConfig sends each measured response's audio to an OpenAI-compatible
// transcription endpoint (POST /v1/audio/transcriptions, multipart: file,
// model) after the response is measured, and scores the transcript against
// the reference text (package wer): the text asked for (the speech kinds,
// each speech-ws utterance its own) or the response's own text (chat, each
// realtime turn). realtime-audio turns are not transcribed. The transcriptions run off the request path,
// with their own concurrency and a queue with a cap: a response that finds
// the queue full is not transcribed (counted as skipped), so that the
// transcriber never slows the load.
type ASRConfig struct {
	URL         string        // the server's base URL; empty: no transcription
	Model       string        // the "model" field; empty sends none
	Concurrency int           // transcriptions at once; default 2
	Queue       int           // responses waiting; default 8 x Concurrency
	MaxAudio    time.Duration // audio sent per response, from its start; default 60 s
	Timeout     time.Duration // per transcription; default 2 minutes
}

// Defaults of ASRConfig.
const (
	DefaultASRConcurrency = 2
	DefaultASRMaxAudio    = 60 * time.Second
	defaultASRTimeout     = 2 * time.Minute
	// maxASRReply caps a transcription's response body.
	maxASRReply = 1 << 20
	// maxReferenceBytes caps the text kept of a response as its reference
	// (chat): about an hour of speech.
	maxReferenceBytes = 64 << 10
)

func (c ASRConfig) withDefaults() ASRConfig {
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultASRConcurrency
	}
	if c.Queue <= 0 {
		c.Queue = 8 * c.Concurrency
	}
	if c.MaxAudio <= 0 {
		c.MaxAudio = DefaultASRMaxAudio
	}
	if c.Timeout <= 0 {
		c.Timeout = defaultASRTimeout
	}
	return c
}

// endpoint is the transcription URL: the base URL with the OpenAI path,
// unless the URL already ends with it.
func (c ASRConfig) endpoint() string {
	const path = "/v1/audio/transcriptions"
	u := strings.TrimRight(c.URL, "/")
	if strings.HasSuffix(u, path) {
		return u
	}
	return strings.TrimSuffix(u, "/v1") + path
}

// asrJob is one response to transcribe: its audio as a WAV file, its
// reference, and where its sample is in the run's summary.Set.
type asrJob struct {
	id, reference string
	setIndex      int
	wav           []byte
	audioS        float64
}

// asrScored is a finished transcription, applied to the Set at drain.
type asrScored struct {
	setIndex int
	score    results.ASRScore
}

// asrSink queues the measured responses for transcription. add runs on the
// bookkeeping goroutine; the workers score and write the results lines;
// drain waits for them before the figures are computed.
type asrSink struct {
	noClose
	cfg     ASRConfig
	set     *summary.Set
	out     *resultsSink // nil without --out
	httpc   *http.Client
	refs    referenceTexts
	queue   chan asrJob
	closeQ  sync.Once
	workers sync.WaitGroup
	cancel  context.CancelFunc
	ctx     context.Context

	offered, skipped int // bookkeeping goroutine only

	mu       sync.Mutex
	scored   []asrScored
	failed   int
	firstErr error
}

func newASRSink(cfg ASRConfig, set *summary.Set, out *resultsSink, c *Config) *asrSink {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	tr := tlsconf.Transport(c.Client.TLSConfig)
	tr.MaxIdleConnsPerHost = cfg.Concurrency
	s := &asrSink{
		cfg: cfg, set: set, out: out, ctx: ctx, cancel: cancel,
		httpc: &http.Client{Timeout: cfg.Timeout, Transport: tr},
		queue: make(chan asrJob, cfg.Queue),
	}
	s.workers.Add(cfg.Concurrency)
	for range cfg.Concurrency {
		go s.work()
	}
	return s
}

// referenceTexts holds each request's reference from the moment its job
// knows it until the sink takes it: the job's goroutine puts, the
// bookkeeping goroutine takes. It holds at most the requests between the
// two, which the record queue bounds.
type referenceTexts struct {
	mu sync.Mutex
	m  map[string]string
}

func (r *referenceTexts) put(id, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]string{}
	}
	r.m[id] = text
}

func (r *referenceTexts) take(id string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	text := r.m[id]
	delete(r.m, id)
	return text
}

// asrReference is the text a response's transcription is scored against:
// the response's own text for chat (the words the model says it spoke),
// the input text otherwise.
func asrReference(spec scenarios.RequestSpec, chatText *cappedText) string {
	if chatText != nil {
		return chatText.b.String()
	}
	return spec.Prompt
}

// cappedText is a response's text as it arrives, up to maxReferenceBytes.
type cappedText struct{ b bytes.Buffer }

func (t *cappedText) Write(p []byte) (int, error) {
	if room := maxReferenceBytes - t.b.Len(); room > 0 {
		t.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// add queues a measured, successful response with audio and a reference;
// the sample it scores is the one the figures sink has just added.
func (s *asrSink) add(rec *results.Record, audio *bytes.Buffer) error {
	ref := s.refs.take(rec.ID)
	f := wav.Format{SampleRate: rec.SampleRate, Channels: rec.Channels, BitsPerSample: 8 * rec.SampleWidth}
	if rec.Warmup || !rec.OK() || audio == nil || audio.Len() == 0 || f.BytesPerFrame() <= 0 || f.SampleRate <= 0 ||
		strings.TrimSpace(ref) == "" {
		return nil
	}
	s.offered++
	if len(s.queue) == cap(s.queue) {
		s.skipped++
		return nil
	}
	pcm := audio.Bytes()
	if limit := int(s.cfg.MaxAudio.Seconds()*float64(f.SampleRate)) * f.BytesPerFrame(); len(pcm) > limit {
		pcm = pcm[:limit]
	}
	pcm = pcm[:len(pcm)-len(pcm)%f.BytesPerFrame()]
	// This goroutine is the queue's only sender and there is room: the
	// send does not block.
	s.queue <- asrJob{
		id: rec.ID, reference: ref, setIndex: s.set.Len() - 1,
		wav:    wav.Encode(f, pcm),
		audioS: float64(len(pcm)/f.BytesPerFrame()) / float64(f.SampleRate),
	}
	return nil
}

// work transcribes queued responses until the queue is closed.
func (s *asrSink) work() {
	defer s.workers.Done()
	var aligner wer.Aligner
	for job := range s.queue {
		score, err := s.score(&aligner, job)
		if err == nil && s.out != nil {
			err = s.out.writeASR(job.id, score)
		}
		s.mu.Lock()
		if err != nil {
			s.failed++
			if s.firstErr == nil {
				s.firstErr = fmt.Errorf("%s: %w", job.id, err)
			}
		} else {
			s.scored = append(s.scored, asrScored{setIndex: job.setIndex, score: score})
		}
		s.mu.Unlock()
	}
}

// score transcribes one response and scores the transcript.
func (s *asrSink) score(a *wer.Aligner, job asrJob) (results.ASRScore, error) {
	hyp, err := s.transcribe(job.wav)
	if err != nil {
		return results.ASRScore{}, err
	}
	words, chars, err := a.Score(job.reference, hyp)
	if err != nil {
		return results.ASRScore{}, fmt.Errorf("score: %w", err)
	}
	w, ok := words.Rate()
	if !ok {
		return results.ASRScore{}, errors.New("score: the reference has no words")
	}
	c, _ := chars.Rate()
	return results.ASRScore{WER: w, CER: c, RefWords: words.RefLen(), Hypothesis: hyp, Reference: job.reference, AudioS: job.audioS}, nil
}

// transcribe posts one WAV file and returns the transcript.
func (s *asrSink) transcribe(file []byte) (string, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", "audio.wav")
	if err == nil {
		_, err = fw.Write(file)
	}
	if err == nil && s.cfg.Model != "" {
		err = mw.WriteField("model", s.cfg.Model)
	}
	if err == nil {
		err = mw.Close()
	}
	if err != nil {
		return "", fmt.Errorf("build request: %w", err)
	}
	req, err := http.NewRequestWithContext(s.ctx, http.MethodPost, s.cfg.endpoint(), &body)
	if err != nil {
		return "", fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := s.httpc.Do(req)
	if err != nil {
		return "", fmt.Errorf("transcription request: %w", err)
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(io.LimitReader(resp.Body, maxASRReply+1))
	if err != nil {
		return "", fmt.Errorf("transcription reply: %w", err)
	}
	return parseTranscription(resp.StatusCode, reply)
}

// parseTranscription reads a transcription reply: {"text": "..."} with a
// 2xx status, at most maxASRReply bytes.
func parseTranscription(status int, reply []byte) (string, error) {
	if len(reply) > maxASRReply {
		return "", fmt.Errorf("transcription reply over %d bytes", maxASRReply)
	}
	if status < 200 || status > 299 {
		return "", fmt.Errorf("transcription server answered HTTP %d: %s", status, clipReply(reply))
	}
	var v struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(reply, &v); err != nil {
		return "", fmt.Errorf("transcription reply is not JSON: %w", err)
	}
	if v.Text == nil {
		return "", fmt.Errorf("transcription reply has no \"text\": %s", clipReply(reply))
	}
	return *v.Text, nil
}

// clipReply is the start of a reply for an error message.
func clipReply(b []byte) string {
	const n = 120
	if len(b) > n {
		return strings.ToValidUTF8(string(b[:n]), "") + "..."
	}
	return strings.ToValidUTF8(string(b), "")
}

// drain waits for the queued transcriptions (all of them, or until ctx is
// done, when the ones in flight are cancelled and the rest dropped), puts
// the scores into the Set and says how many were scored.
func (s *asrSink) drain(ctx context.Context, log io.Writer, out *Outcome) {
	s.closeQ.Do(func() { close(s.queue) })
	done := make(chan struct{})
	go func() {
		s.workers.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		s.cancel()
		<-done // the cancelled requests return at once; the rest of the queue fails the same way
	}
	s.cancel()
	s.httpc.CloseIdleConnections()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sc := range s.scored {
		s.set.SetASR(sc.setIndex, sc.score)
	}
	s.set.NoteASR(summary.ASRCounts{Offered: s.offered, Skipped: s.skipped, Failed: s.failed})
	msg := fmt.Sprintf("asr: scored %d of %d responses", len(s.scored), s.offered)
	if s.skipped > 0 {
		msg += fmt.Sprintf(" (%d skipped: the queue of %d was full)", s.skipped, s.cfg.Queue)
	}
	if s.failed > 0 {
		msg += fmt.Sprintf("; %d transcriptions failed, the first: %v", s.failed, s.firstErr)
	}
	out.note(log, msg)
}

// stop ends the workers of a run that ends without drain (it failed before
// its load): nothing was queued.
func (s *asrSink) stop() {
	s.closeQ.Do(func() { close(s.queue) })
	s.cancel()
	s.workers.Wait()
}

// writeASR writes a transcription's line to the results file. Only
// measured requests are transcribed, and they finish after the measured
// phase began, when the header gate is open.
func (s *resultsSink) writeASR(id string, score results.ASRScore) error {
	return s.gate.w.WriteASR(id, score)
}
