package omnimetrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// vec is the registered collector of one family; exactly one field is set,
// matching the FamilySpec's Type.
type vec struct {
	counter   *prometheus.CounterVec
	gauge     *prometheus.GaugeVec
	histogram *prometheus.HistogramVec
}

// declared is what the exposition needs to print a family that has no
// children yet: its full name, HELP and TYPE.
type declared struct {
	name string
	help string
	typ  dto.MetricType
}

// register builds the collector for spec under the full name and registers it
// with reg. It is the only place where collectors are constructed, so every
// family follows its FamilySpec.
func register(reg prometheus.Registerer, name string, spec FamilySpec, constLabels prometheus.Labels) (vec, declared, error) {
	var (
		v   vec
		c   prometheus.Collector
		typ dto.MetricType
	)
	switch spec.Type {
	case TypeCounter:
		v.counter = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: name, Help: spec.Help, ConstLabels: constLabels,
		}, spec.Labels)
		c, typ = v.counter, dto.MetricType_COUNTER
	case TypeGauge:
		v.gauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: name, Help: spec.Help, ConstLabels: constLabels,
		}, spec.Labels)
		c, typ = v.gauge, dto.MetricType_GAUGE
	case TypeHistogram:
		v.histogram = prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: name, Help: spec.Help, ConstLabels: constLabels, Buckets: spec.Buckets,
		}, spec.Labels)
		c, typ = v.histogram, dto.MetricType_HISTOGRAM
	default:
		return vec{}, declared{}, fmt.Errorf("omnimetrics: family %s: unknown type %q", name, spec.Type)
	}
	if err := reg.Register(c); err != nil {
		return vec{}, declared{}, fmt.Errorf("omnimetrics: register family %s: %w", name, err)
	}
	return v, declared{name: name, help: spec.Help, typ: typ}, nil
}
