package results

// AudioCheck is the signal check of one response's decoded audio (package
// audiocheck): levels in dBFS, the share of samples in runs of full scale,
// the mean sample over full scale, the longest run of near-silence inside
// the audio (after it first became audible, before it last was) and how
// many such gaps were over the counting threshold, whether the last window
// was still loud, and the defects that flag the response.
type AudioCheck struct {
	PeakDBFS     float64 `json:"peak_dbfs"`
	RMSDBFS      float64 `json:"rms_dbfs"`
	ClippedShare float64 `json:"clipped_share"`
	DCOffset     float64 `json:"dc_offset"`
	LongestGapS  float64 `json:"longest_gap_s"`
	GapsOver     int     `json:"gaps_over"`
	AbruptEnd    bool    `json:"abrupt_end,omitempty"`
	// Defects are the reasons the response is flagged audio_defect:
	// "all_silent", "clipped", "internal_gap". A defect is counted beside
	// the error classes, never as one: the request keeps its latency
	// figures.
	Defects []string `json:"defects,omitempty"`
}

// AudioDefect reports whether the response's audio was checked and flagged.
func (r *Record) AudioDefect() bool { return r.Audio != nil && len(r.Audio.Defects) > 0 }

// ASRScore is the transcription of one response's audio by the --asr-url
// endpoint, scored against the reference text (package wer): the text that
// was asked for (speech kinds) or the response's own text (chat).
type ASRScore struct {
	WER        float64 `json:"wer"`
	CER        float64 `json:"cer"`
	RefWords   int     `json:"ref_words"`
	Hypothesis string  `json:"hypothesis"`
	Reference  string  `json:"reference"`
	// AudioS is the audio sent for transcription, at most the cap.
	AudioS float64 `json:"audio_s"`
}

// asrLine is the JSON form of a TypeASR line: the score of the request
// whose record has ID.
type asrLine struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	ASRScore
}

// WriteASR writes the transcription score of request id, a line of its
// own: transcription runs after the request's line was written.
func (w *Writer) WriteASR(id string, s ASRScore) error {
	return w.writeLine(&asrLine{Type: TypeASR, ID: id, ASRScore: s})
}
