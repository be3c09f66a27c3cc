package main

import (
	"fmt"
	"io"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
	"github.com/omnibench/omnibench/internal/simulator"
)

// serveOptions are the flags of `omnibench serve` that do not map 1:1 onto
// simulator.Config.
type serveOptions struct {
	cfg             simulator.Config
	replicas        string
	logStats        bool
	disableLogStats bool
	noStamp         bool // deprecated: stamps are off unless --stamp
	// speechStreamMetrics: speech streams feed the audio families and the
	// speech-stream counters, as on servers since September 2026.
	speechStreamMetrics bool
}

func newServeCmd() *cobra.Command {
	o := serveOptions{cfg: simulator.DefaultConfig(), replicas: "1,1,1", speechStreamMetrics: true}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the simulated vLLM-Omni server (chat, speech, /metrics)",
		Long: `serve runs a vLLM-Omni-compatible server that streams synthetic speech:
POST /v1/chat/completions (streaming and not), POST /v1/audio/speech (file, raw
byte stream, SSE), WS /v1/audio/speech/stream, WS /v1/realtime (plain, and the
duplex session with ?duplex=1 or at /v1/duplex), GET /v1/models, GET /health and
GET /metrics. Timing, capacity and faults are configurable and deterministic
under --seed.

The duplex session sends its audio events as current servers do
(response.output_audio.delta and so on); --realtime-events legacy sends the
response.audio.* names of release 0.28.0 and older. --duplex-only serves as a
duplex model's server does: the duplex session, /v1/models, /health and
/metrics, and chat only with --duplex-chat; every other route answers that it
is not available (HTTP 404 naming the route, or an error event on WebSocket).

Capacity model: --capacity N streams run at full speed; with more, generation
slows by active/N, so playback continuity breaks above N / --rtf streams.`,
		Example: `  omnibench serve --addr 127.0.0.1:8000 --log-stats
  omnibench serve --addr 127.0.0.1:8000 --capacity 8 --rtf 0.3 --replicas 2,1,4
  omnibench serve --fault-500 0.05 --fault-disconnect 0.02 --seed 7
  omnibench serve --realtime-events legacy
  omnibench serve --duplex-only --model openbmb/MiniCPM-o-4_5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := o.config()
			if err != nil {
				return withExitCode(2, err)
			}
			if _, _, err := net.SplitHostPort(cfg.Addr); err != nil {
				return withExitCode(2, fmt.Errorf("--addr %q: want host:port: %w", cfg.Addr, err))
			}
			run, err := simulator.Start(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			writeServeBanner(cmd.ErrOrStderr(), run.URL, run.Server().Config())
			return run.Wait()
		},
	}
	o.addFlags(cmd.Flags())
	_ = cmd.RegisterFlagCompletionFunc("metrics-prefix", cobra.FixedCompletions(
		[]string{omnimetrics.PrefixDesign, omnimetrics.PrefixCurrent}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("realtime-events", cobra.FixedCompletions(
		[]string{simulator.RealtimeEventsGA, simulator.RealtimeEventsLegacy}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// addFlags binds the server's flags: its address and model, the timing
// model, metrics, the WebSocket endpoints, and the faults (addFaultFlags).
func (o *serveOptions) addFlags(f *pflag.FlagSet) {
	c := &o.cfg
	t := &c.Timing
	f.StringVar(&c.Addr, "addr", c.Addr, "listen address (host:port; port 0 picks a free one)")
	f.StringVar(&c.Model, "model", c.Model, "served model name (model_name label, /v1/models)")
	f.IntVar(&c.SampleRate, "sample-rate", c.SampleRate, "sample rate of the generated audio in Hz")
	f.StringVar(&o.replicas, "replicas", o.replicas, "replicas per stage, stage 0 first (thinker,talker,code2wav)")
	f.Int64Var(&c.Seed, "seed", c.Seed, "seed of every request's timing and fault draws")
	f.IntVar(&c.Capacity, "capacity", c.Capacity, "concurrent streams served at full speed (0 = unlimited)")
	f.DurationVar(&c.StatsCost, "stats-cost", 0, "with stats on: extra service time per request, slowed by the capacity model (a cost for ab to find)")
	f.DurationVar(&t.TTFT, "ttft", t.TTFT, "time to the first text word")
	f.DurationVar(&t.WordInterval, "word-interval", t.WordInterval, "time between text words")
	f.DurationVar(&t.TTFA, "ttfa", t.TTFA, "time to the first audio chunk")
	f.DurationVar(&t.ChunkAudio, "chunk-audio", t.ChunkAudio, "audio per chunk")
	f.Float64Var(&t.RTF, "rtf", t.RTF, "generation time per second of audio (real-time factor)")
	f.Float64Var(&t.Jitter, "jitter", t.Jitter, "relative uniform jitter of every interval and chunk size, in [0,1)")
	f.Float64Var(&t.StallProb, "stall-prob", t.StallProb, "probability of a stall before each audio chunk")
	f.DurationVar(&t.Stall, "stall", t.Stall, "length of such a stall")
	f.DurationVar(&t.AudioPerChar, "audio-per-char", t.AudioPerChar, "audio per character of the reply")
	f.DurationVar(&t.MinAudio, "min-audio", t.MinAudio, "shortest audio of a response")
	f.DurationVar(&t.MaxAudio, "max-audio", t.MaxAudio, "longest audio of a response")
	f.DurationVar(&t.LeadingSilence, "leading-silence", 0, "digital silence at the start of every response's audio (moves ttfa_audible, not TTFP)")
	f.StringVar(&c.VoiceEngine, "voice-engine", simulator.VoiceTones, "voice of the audio: tones, or espeak-ng (real speech of the reply text; needs espeak-ng installed)")
	f.DurationVar(&t.AudioPrefill, "audio-prefill", t.AudioPrefill, "prefill time per second of input audio (spoken prompts, ref_audio)")
	o.addFaultFlags(f)
	f.BoolVar(&o.logStats, "log-stats", false, "record metrics (off by default, as on servers that follow the original metrics design)")
	f.BoolVar(&o.disableLogStats, "disable-log-stats", false, "do not record metrics (newer servers' flag; wins over --log-stats)")
	f.StringVar(&c.Prefix, "metrics-prefix", c.Prefix,
		fmt.Sprintf("pipeline family prefix: %s (design) or %s (newer servers)", omnimetrics.PrefixDesign, omnimetrics.PrefixCurrent))
	f.BoolVar(&o.speechStreamMetrics, "speech-stream-metrics", true,
		"speech streams record TTFP, underrun and continuity and the speech_stream_* counters (servers since Sep 2026); false: chat only, as older servers")
	w := &c.WS
	f.DurationVar(&w.SpeechConfigTimeout, "ws-config-timeout", 10*time.Second, "WS /v1/audio/speech/stream: wait for session.config")
	f.DurationVar(&w.SpeechIdleTimeout, "ws-idle-timeout", 30*time.Second, "WS /v1/audio/speech/stream: wait for every later message")
	f.DurationVar(&w.RealtimeFirstTimeout, "realtime-first-timeout", 10*time.Second, "WS /v1/realtime?duplex=1: wait for the first event")
	f.DurationVar(&w.RealtimeIdleTimeout, "realtime-idle-timeout", 300*time.Second, "WS /v1/realtime?duplex=1: default idle_timeout_s of a session")
	f.BoolVar(&w.NoForcedAligner, "no-forced-aligner", false, "refuse word_timestamps as a server started without --forced-aligner does")
	f.StringVar(&w.RealtimeEvents, "realtime-events", simulator.RealtimeEventsGA,
		fmt.Sprintf("names of the duplex session's audio events: %s (response.output_audio.*, current servers) or %s (response.audio.*, 0.28.0)",
			simulator.RealtimeEventsGA, simulator.RealtimeEventsLegacy))
	f.BoolVar(&c.DuplexOnly, "duplex-only", false, "serve only the duplex session, /v1/models, /health and /metrics, as a duplex model's server does")
	f.BoolVar(&c.DuplexChat, "duplex-chat", false, "with --duplex-only: serve chat too (the duplex plugin supports it)")
	f.BoolVar(&c.Stamp, "stamp", false, "write ': sent=<unix ns>' comments before SSE events (omnibench's client measures its receive delay from them; real servers send none)")
	f.BoolVar(&o.noStamp, "no-stamp", false, "do not write send stamps")
	_ = f.MarkDeprecated("no-stamp", "stamps are off unless --stamp is given")
}

// addFaultFlags binds the fault injection flags, each a per-request
// probability or the size of its fault.
func (o *serveOptions) addFaultFlags(f *pflag.FlagSet) {
	ft := &o.cfg.Faults
	f.Float64Var(&ft.HTTP500, "fault-500", 0, "probability of an HTTP 500 before the stream")
	f.Float64Var(&ft.Disconnect, "fault-disconnect", 0, "probability of dropping the connection mid-stream")
	f.Float64Var(&ft.ErrorEvent, "fault-error-event", 0, "probability of an error event mid-stream")
	f.Float64Var(&ft.Stall, "fault-stall", 0, "probability of a long mid-stream stall (see --fault-stall-for)")
	f.DurationVar(&ft.StallFor, "fault-stall-for", 0, "length of the stall fault (0 = 30s); ends early when the client leaves")
	f.Float64Var(&ft.EmptyAudio, "fault-empty-audio", 0, "probability of a response with no audio")
	f.Float64Var(&ft.EmptyAudioEvent, "fault-empty-audio-event", 0,
		`probability of a chat stream whose first audio event is empty (content "", upstream #5237)`)
	f.Float64Var(&ft.MalformedBase64, "fault-bad-base64", 0, "probability of one audio event with malformed base64")
	f.Float64Var(&ft.Oversized, "fault-oversized", 0, "probability of one oversized (valid) audio event")
	f.IntVar(&ft.OversizedBytes, "fault-oversized-bytes", 0, "base64 size of the oversized event (0 = 300 KiB)")
	f.Float64Var(&ft.VoiceMute, "fault-voice-mute", 0, "with --voice-engine espeak-ng: probability of silencing a span around the middle of the speech (see --fault-voice-mute-for)")
	f.DurationVar(&ft.VoiceMuteFor, "fault-voice-mute-for", 0, "length of the voice-mute fault's silence (0 = 1.5s)")
	f.Float64Var(&ft.VoiceClip, "fault-voice-clip", 0, "with --voice-engine espeak-ng: probability of driving the speech 18 dB past full scale (clipping)")
	f.Float64Var(&ft.VoiceCutEnd, "fault-voice-cut-end", 0, "with --voice-engine espeak-ng: probability of stopping the speech at 60% of its length, mid-word")
	f.Float64Var(&ft.VoiceSwap, "fault-voice-swap", 0, "with --voice-engine espeak-ng: probability of speaking the previous different text instead of this one")
}

// config turns the flags into a validated simulator configuration.
func (o *serveOptions) config() (simulator.Config, error) {
	cfg := o.cfg
	topo, err := simulator.ParseReplicas(o.replicas)
	if err != nil {
		return cfg, fmt.Errorf("--replicas: %w", err)
	}
	cfg.Topology = topo
	cfg.StatsEnabled = o.logStats && !o.disableLogStats
	cfg.Stamp = cfg.Stamp && !o.noStamp
	cfg.NoSpeechStreamMetrics = !o.speechStreamMetrics
	// Validate here too so a bad flag fails before anything listens.
	if _, err := simulator.New(cfg); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// writeServeBanner says on stderr what serve is serving, one short line
// per topic.
func writeServeBanner(w io.Writer, url string, cfg simulator.Config) {
	fmt.Fprintf(w, "omnibench serve: listening on %s\n", url)
	fmt.Fprintf(w, "omnibench serve: model %s\n", cfg.Model)
	fmt.Fprintf(w, "omnibench serve: replicas %s, stats %s, prefix %s\n", joinInts(cfg.Topology), onOff(cfg.StatsEnabled), cfg.Prefix)
	fmt.Fprintf(w, "omnibench serve: capacity %s\n", capacityText(cfg))
	names := "response.output_audio.*"
	if cfg.WS.RealtimeEvents == simulator.RealtimeEventsLegacy {
		names = "response.audio.*"
	}
	fmt.Fprintf(w, "omnibench serve: duplex session events %s (%s)\n", cfg.WS.RealtimeEvents, names)
	switch {
	case cfg.DuplexOnly && cfg.DuplexChat:
		fmt.Fprintln(w, "omnibench serve: duplex-only with chat: the speech routes answer not available")
	case cfg.DuplexOnly:
		fmt.Fprintln(w, "omnibench serve: duplex-only: the chat and speech routes answer not available")
	}
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func capacityText(cfg simulator.Config) string {
	k := cfg.KneeStreams()
	if math.IsInf(k, 1) {
		return "unlimited"
	}
	return fmt.Sprintf("%d streams (playback continuity breaks above %.0f concurrent streams)", cfg.Capacity, k)
}
