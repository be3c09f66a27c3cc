package scenarios

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/load"
)

// Overrides are the command-line settings that replace a scenario's own.
// A nil pointer, an empty string or a nil slice is a setting the user did
// not give: the scenario's value (or the command's default) applies. Every
// error Apply returns names the flag that carries the setting, so that the
// fields are documented by the flag names they mirror.
type Overrides struct {
	Kind            *string   // --kind
	Model           *string   // --model
	Voice           *string   // --voice
	AudioFormat     *string   // --audio-format
	Modalities      *[]string // --modalities
	Prompts         *string   // --prompts
	AudioInputStyle *string   // --audio-input-style
	PCMSampleRate   *int      // --pcm-sample-rate
	ExtraBody       string    // --extra-body: a JSON object merged into every request body
	Headers         []Header  // -H/--header, in the order given
	// HaveAPIKey says the request's credentials already come from an API
	// key, so an Authorization header would be a second set.
	HaveAPIKey bool

	Load LoadOverrides

	Thresholds  []float64 // --threshold, parsed
	Percentiles []float64 // --percentiles
}

// Header is one request header given on the command line.
type Header struct{ Name, Value string }

// LoadOverrides are the load flags. The pointers are the settings whose
// absence lets the scenario's value through; the plain fields have no
// scenario counterpart (or use their zero value as "not given").
type LoadOverrides struct {
	Concurrency *int           // -c/--concurrency
	Rate        *float64       // --rate (its END for a ramp)
	RateStart   float64        // --rate START:END
	RampUp      time.Duration  // --ramp-up
	Stages      string         // --stages, unparsed
	Arrival     string         // --arrival
	Burstiness  float64        // --burstiness
	Requests    *int           // -n/--requests
	Duration    *time.Duration // -d/--duration
	Warmup      *int           // --warmup
	MaxInflight int            // --max-inflight
	Seed        int64          // --seed
	Grace       time.Duration  // --grace
}

// DefaultConcurrency is the closed loop's worker count when neither the
// flags nor the scenario give one.
const DefaultConcurrency = 4

// DefaultRequests is the measured request count when nothing bounds the
// run: neither a count, a duration nor stages.
const DefaultRequests = 20

// DefaultPCMSampleRate is the rate of raw PCM when neither --pcm-sample-rate
// nor the scenario gives one: Qwen3-Omni's and Qwen3-TTS's 24 kHz.
const DefaultPCMSampleRate = 24000

// Applied is a scenario with the overrides applied: what a run does.
type Applied struct {
	// Workload is the scenario's requests, with the credentials of an
	// Authorization header added (they never enter the scenario, which is
	// printed and copied around).
	Workload *Workload
	Load     load.Config
	// Thresholds are the continuity thresholds: nil when neither the flags
	// nor the scenario give any (the command's default applies).
	Thresholds  []float64
	Percentiles []float64
	// Notes are what the run should say about the overrides (a kind change
	// that dropped scenario fields).
	Notes []string
}

// Apply writes the overrides into sc (a clone the caller owns) and builds
// the run's workload and load. Flags replace the scenario's values; the
// scenario's replace the defaults.
func (o Overrides) Apply(sc *Scenario) (Applied, error) {
	var ap Applied
	ap.Notes = o.applyFields(sc)
	if err := o.applyExtraBody(sc); err != nil {
		return ap, err
	}
	creds, err := o.applyHeaders(sc)
	if err != nil {
		return ap, err
	}
	if ap.Workload, err = sc.Workload(); err != nil {
		return ap, o.nameFlags(err)
	}
	if len(creds) > 0 {
		ap.Workload = ap.Workload.WithHeaders(creds)
	}
	if ap.Load, err = o.Load.config(sc.Load); err != nil {
		return ap, err
	}
	if err := summary.CheckPercentiles("--percentiles", o.Percentiles); err != nil {
		return ap, err
	}
	ap.Percentiles = o.Percentiles
	if len(ap.Percentiles) == 0 {
		ap.Percentiles = sc.Percentiles
	}
	ap.Thresholds = o.Thresholds
	if ap.Thresholds == nil && len(sc.Thresholds) > 0 {
		ap.Thresholds = sc.Thresholds
	}
	return ap, nil
}

// applyFields sets the scenario fields the flags give.
func (o Overrides) applyFields(sc *Scenario) (notes []string) {
	if o.Kind != nil {
		notes = sc.SetKind(*o.Kind)
	}
	setString(&sc.Model, o.Model)
	setString(&sc.Voice, o.Voice)
	setString(&sc.AudioFormat, o.AudioFormat)
	if o.Modalities != nil {
		sc.Modalities = *o.Modalities
	}
	setString(&sc.PromptSpec.Source, o.Prompts)
	setString(&sc.AudioInputStyle, o.AudioInputStyle)
	if o.PCMSampleRate != nil {
		sc.PCMSampleRate = *o.PCMSampleRate
	} else if o.AudioFormat != nil && sc.AudioFormat == FormatPCM && sc.PCMSampleRate == 0 {
		sc.PCMSampleRate = DefaultPCMSampleRate // raw PCM states no rate: the flag's documented default
	}
	return notes
}

func setString(dst *string, v *string) {
	if v != nil {
		*dst = *v
	}
}

func (o Overrides) applyExtraBody(sc *Scenario) error {
	if o.ExtraBody == "" {
		return nil
	}
	var extra map[string]any
	if err := json.Unmarshal([]byte(o.ExtraBody), &extra); err != nil {
		return fmt.Errorf("--extra-body: not a JSON object: %w", err)
	}
	if sc.ExtraBody == nil {
		sc.ExtraBody = map[string]any{}
	}
	for k, v := range extra {
		sc.ExtraBody[k] = v
	}
	return nil
}

// applyHeaders adds the headers to the scenario, except Authorization,
// which it returns: a scenario may not hold credentials (it is printed and
// copied around), the command line may (its values are redacted from every
// output, like an API key). An Authorization header beside an API key
// would be two credentials for one request, and is refused.
func (o Overrides) applyHeaders(sc *Scenario) (creds map[string]string, err error) {
	for _, h := range o.Headers {
		if strings.EqualFold(h.Name, "Authorization") {
			if o.HaveAPIKey {
				return nil, errors.New("--header Authorization and --api-key (or $OMNIBENCH_API_KEY) both set the request's credentials: give one")
			}
			creds = map[string]string{"Authorization": h.Value}
			continue
		}
		if sc.Headers == nil {
			sc.Headers = map[string]string{}
		}
		sc.Headers[h.Name] = h.Value
	}
	return creds, nil
}

// nameFlags rewrites the scenario's field errors about a field a flag set
// so that they name the flag (--pcm-sample-rate, not pcm_sample_rate): the
// user typed the flag, and may have no scenario file to look at.
func (o Overrides) nameFlags(err error) error {
	errs := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	}
	out := make([]error, 0, len(errs))
	for _, e := range errs {
		var fe *FieldError
		if errors.As(e, &fe) {
			if flag := o.flagOfField(fe.Field); flag != "" {
				e = fmt.Errorf("--%s: %s", flag, fe.Msg)
			}
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}

// flagOfField is the flag that set a scenario field ("" when none did).
func (o Overrides) flagOfField(field string) string {
	given := map[string]bool{
		"kind":              o.Kind != nil,
		"model":             o.Model != nil,
		"voice":             o.Voice != nil,
		"modalities":        o.Modalities != nil,
		"audio_format":      o.AudioFormat != nil,
		"audio_input_style": o.AudioInputStyle != nil,
		"pcm_sample_rate":   o.PCMSampleRate != nil,
		"prompts.source":    o.Prompts != nil,
	}
	switch {
	case field == "prompts.source" && given[field]:
		return "prompts"
	case given[field]:
		return strings.ReplaceAll(field, "_", "-")
	case strings.HasPrefix(field, "extra_body") && o.ExtraBody != "":
		return "extra-body"
	}
	return ""
}
