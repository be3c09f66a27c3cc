package main

import (
	"strings"
	"testing"
)

// TestServeSpeechStreamMetricsFlag: by default a raw speech stream counts in
// the speech-stream counter and audio_ttfp_s, as on current servers;
// --speech-stream-metrics=false serves the older behaviour, where neither
// exists.
func TestServeSpeechStreamMetricsFlag(t *testing.T) {
	const completed = `vllm:omni_speech_stream_completed_total{model_name="Qwen/Qwen3-Omni-30B-A3B-Instruct"} 1`
	const ttfp = `vllm:omni_audio_ttfp_s_count{model_name="Qwen/Qwen3-Omni-30B-A3B-Instruct",replica="0",stage="2"} 1`
	for _, tc := range []struct {
		flag    string
		current bool
	}{{"--speech-stream-metrics=true", true}, {"--speech-stream-metrics=false", false}} {
		t.Run(tc.flag, func(t *testing.T) {
			url, _ := startServe(t, "--log-stats", "--ttfa", "1ms", "--rtf", "0.01", tc.flag)
			if status := httpPost(t, url+"/v1/audio/speech", `{"input":"hello there","stream_format":"audio"}`); status != 200 {
				t.Fatalf("speech stream: %d", status)
			}
			_, metrics := httpGet(t, url+"/metrics")
			if got := strings.Contains(metrics, completed) && strings.Contains(metrics, ttfp); got != tc.current {
				t.Errorf("speech stream counted: %v, want %v:\n%s", got, tc.current, metrics)
			}
			if !tc.current && strings.Contains(metrics, "speech_stream") {
				t.Error("an older server declares a speech-stream family")
			}
		})
	}
}
