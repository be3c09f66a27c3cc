package omnimetrics

import (
	"testing"

	"github.com/omnibench/omnibench/continuity"
)

func BenchmarkAudioFirstPacket(b *testing.B) {
	m := newTestMetrics(b, serverOpts(""))
	sr := StageReplica{Stage: 2}
	b.ReportAllocs()
	for b.Loop() {
		m.AudioFirstPacket(sr, 0.25)
	}
}

func BenchmarkAudioFirstPacketParallel(b *testing.B) {
	m := newTestMetrics(b, serverOpts(""))
	sr := StageReplica{Stage: 2}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.AudioFirstPacket(sr, 0.25)
		}
	})
}

// BenchmarkAudioStreamingFinalize300 is one streaming response of 300 chunks
// (a 30 s answer in 0.1 s chunks at 24 kHz), simulation included.
func BenchmarkAudioStreamingFinalize300(b *testing.B) {
	const chunks = 300
	arrivals := make([]float64, chunks)
	bytes := make([]int, chunks)
	for i := range chunks {
		arrivals[i] = 0.09 * float64(i)
		bytes[i] = 4800
	}
	for _, mode := range []continuity.Mode{continuity.Reference, continuity.Default} {
		b.Run(mode.String(), func(b *testing.B) {
			opts := serverOpts("")
			opts.ContinuityMode = mode
			m := newTestMetrics(b, opts)
			sr := StageReplica{Stage: 2}
			b.ReportAllocs()
			for b.Loop() {
				m.AudioStreamingFinalize(sr, arrivals, bytes, 24000)
			}
		})
	}
}

func BenchmarkTransferHop(b *testing.B) {
	m := newTestMetrics(b, serverOpts(""))
	e := Edge{FromStage: 0, ToStage: 1}
	b.ReportAllocs()
	for b.Loop() {
		m.TransferHop(e, 65536, 0.001, 0.002, 0.003)
	}
}

func BenchmarkRequestSucceeded(b *testing.B) {
	m := newTestMetrics(b, serverOpts(""))
	b.ReportAllocs()
	for b.Loop() {
		m.RequestSucceeded(1.5, "stop")
	}
}

func BenchmarkStatsOff(b *testing.B) {
	m := newTestMetrics(b, Options{})
	sr := StageReplica{Stage: 2}
	b.ReportAllocs()
	for b.Loop() {
		m.AudioFirstPacket(sr, 0.25)
		m.AudioAtFinalize(sr, 24000, 24000, 0.5)
	}
}
