package audiocheck

import (
	"bufio"
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/audio/onset"
	"github.com/omnibench/omnibench/internal/audio/wav"
)

// TestAgainstSox: peak, RMS and DC offset of mono signals equal those of
// sox's "stats" effect to the digits it prints (dB to 0.01, DC offset to
// 1e-6).
func TestAgainstSox(t *testing.T) {
	sox, err := exec.LookPath("sox")
	if err != nil {
		t.Skip("sox not installed (Debian package sox): levels are checked against values computed by hand only")
	}
	rng := rand.New(rand.NewPCG(29, 2))
	noise := make([]float64, rate)
	for i := range noise {
		noise[i] = 0.05 + 0.2*(rng.Float64()*2-1)
	}
	for name, x := range map[string][]float64{
		"sine":         sine(rate, 0.7, 440),
		"clipped sine": sine(rate, 1.8, 220),
		"offset noise": noise,
		"tone and gap": cat(sine(ms(300), 0.2, 500), make([]float64, ms(400)), sine(ms(300), 0.4, 700)),
	} {
		b := pcm(x)
		want := soxStats(t, sox, b)
		r := analyze(t, b, Config{}, whole)
		if !near(r.PeakDBFS, want["Pk lev dB"], 0.005) || !near(r.RMSDBFS, want["RMS lev dB"], 0.005) || !near(r.DCOffset, want["DC offset"], 5e-7) {
			t.Errorf("%s: peak %.4f RMS %.4f DC %.7f; sox: %v %v %v", name, r.PeakDBFS, r.RMSDBFS, r.DCOffset,
				want["Pk lev dB"], want["RMS lev dB"], want["DC offset"])
		}
	}
}

// soxStats writes mono PCM as a WAV file and returns sox's stats by name.
func soxStats(t *testing.T, sox string, pcm []byte) map[string]float64 {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.wav")
	if err := os.WriteFile(path, wav.Encode(wav.Format{SampleRate: rate, Channels: 1, BitsPerSample: 16}, pcm), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, sox, path, "-n", "stats")
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("sox stats: %v: %s", err, stderr.String())
	}
	stats := map[string]float64{}
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		for _, name := range []string{"DC offset", "Pk lev dB", "RMS lev dB"} {
			if rest, ok := strings.CutPrefix(sc.Text(), name); ok {
				v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
				if err != nil {
					t.Fatalf("sox stats %q: %v", sc.Text(), err)
				}
				stats[name] = v
			}
		}
	}
	if len(stats) != 3 {
		t.Fatalf("sox stats: found %v in %q", stats, stderr.String())
	}
	return stats
}

// BenchmarkChunk: the cost of one 20 ms chunk of 24 kHz mono speech-level
// audio, beside the onset detector fed the same chunk before it finds an
// onset (its working state; after the onset it only counts frames).
func BenchmarkChunk(b *testing.B) {
	chunk := pcm(sine(ms(20), 0.3, 440))
	quiet := pcm(make([]float64, ms(20)))
	b.Run("audiocheck", func(b *testing.B) {
		a, _ := New(Config{SampleRate: rate, Channels: 1})
		b.SetBytes(int64(len(chunk)))
		for b.Loop() {
			a.Write(chunk)
		}
	})
	b.Run("onset", func(b *testing.B) {
		d, _ := onset.New(onset.Config{SampleRate: rate, Channels: 1, ThresholdDBFS: onset.DefaultThresholdDBFS, Window: onset.DefaultWindow})
		b.SetBytes(int64(len(quiet)))
		for b.Loop() {
			d.Write(quiet)
		}
	})
}
