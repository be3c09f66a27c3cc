package simulator

import (
	"errors"

	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
)

// speechStreamMetrics records one speech stream (raw, SSE or WebSocket) the
// way servers since September 2026 do: audio_ttfp_s when the first
// non-empty PCM payload goes out (a WAV header is not audio), and, for a
// stream that completes normally, underrun and continuity over its PCM
// payloads and the completed-stream counter; an aborted stream skips that
// finalize and counts as aborted. On a server configured as older
// (Config.NoSpeechStreamMetrics) every method does nothing: speech streams
// then feed only the request-end families, through job.succeed and
// job.fail.
type speechStreamMetrics struct {
	m        *omnimetrics.Metrics // nil: an older server
	j        *job
	sr       omnimetrics.StageReplica
	arrivals []float64
	bytes    []int
	ended    bool
}

// newSpeechStreamMetrics starts the record of j's speech stream.
func (s *Server) newSpeechStreamMetrics(j *job) *speechStreamMetrics {
	st := &speechStreamMetrics{j: j, sr: j.finalSR()}
	if !s.cfg.NoSpeechStreamMetrics {
		st.m = s.metrics
	}
	return st
}

// payload notes a payload of n PCM bytes about to be sent; payloads without
// PCM (n == 0: a bare WAV header, an empty chunk) are not audio.
func (st *speechStreamMetrics) payload(n int) {
	if st.m == nil || n <= 0 {
		return
	}
	at := st.j.elapsed()
	if len(st.arrivals) == 0 {
		st.m.AudioFirstPacket(st.sr, at)
	}
	st.arrivals = append(st.arrivals, at)
	st.bytes = append(st.bytes, n)
}

// completed finalizes a stream that ended normally (the simulator's audio
// is mono at the configured rate). Call it before the stream's last write,
// so a client that has read the end finds the stream in /metrics.
func (st *speechStreamMetrics) completed() {
	if st.m == nil || st.ended {
		return
	}
	st.ended = true
	st.m.SpeechStreamCompleted(st.sr, st.arrivals, st.bytes, st.j.s.cfg.SampleRate, 1)
}

// aborted counts a stream that ended early, for a reason abortReason gives.
func (st *speechStreamMetrics) aborted(reason string) {
	if st.m == nil || st.ended {
		return
	}
	st.ended = true
	st.m.SpeechStreamAborted(reason)
}

// abortReason is the aborted-stream reason of a generation's error: a
// failure of the generation (the error-event fault), or else the client
// going away (a context error, a failed write, or the disconnect fault,
// which looks the same to the server).
func abortReason(err error) string {
	if errors.Is(err, errFaultEvent) {
		return omnimetrics.SpeechAbortError
	}
	return omnimetrics.SpeechAbortClientGone
}
