package wav

// Format describes PCM audio.
type Format struct {
	SampleRate    int // frames per second
	Channels      int
	BitsPerSample int // container size of one sample, a multiple of 8
}

// BytesPerFrame is the size of one frame: one sample of every channel.
func (f Format) BytesPerFrame() int { return f.Channels * f.BitsPerSample / 8 }

// BytesPerSecond is the PCM byte rate.
func (f Format) BytesPerSecond() int { return f.SampleRate * f.BytesPerFrame() }
