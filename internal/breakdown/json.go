package breakdown

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
)

// The figures use NaN for "unknown", which JSON numbers cannot hold: the
// types of this package encode it (and infinities) as null.

// MarshalJSON encodes the Breakdown with NaN figures as null.
func (b Breakdown) MarshalJSON() ([]byte, error) { return marshalFinite(b) }

// MarshalJSON encodes the Attribution with NaN figures as null.
func (a Attribution) MarshalJSON() ([]byte, error) { return marshalFinite(a) }

// MarshalJSON encodes the StagePart with NaN figures as null.
func (p StagePart) MarshalJSON() ([]byte, error) { return marshalFinite(p) }

// MarshalJSON encodes the StageRow with NaN figures as null.
func (r StageRow) MarshalJSON() ([]byte, error) { return marshalFinite(r) }

// MarshalJSON encodes the EdgeRow with NaN figures as null.
func (e EdgeRow) MarshalJSON() ([]byte, error) { return marshalFinite(e) }

// MarshalJSON encodes the Figure with NaN figures as null.
func (f Figure) MarshalJSON() ([]byte, error) { return marshalFinite(f) }

// MarshalJSON encodes the Finding with NaN figures as null.
func (f Finding) MarshalJSON() ([]byte, error) { return marshalFinite(f) }

// MarshalJSON encodes the Point with NaN figures as null.
func (p Point) MarshalJSON() ([]byte, error) { return marshalFinite(p) }

// MarshalJSON encodes the Gauge with NaN figures as null.
func (g Gauge) MarshalJSON() ([]byte, error) { return marshalFinite(g) }

// MarshalJSON encodes the Rate with NaN figures as null.
func (r Rate) MarshalJSON() ([]byte, error) { return marshalFinite(r) }

// marshalFinite encodes a struct the way encoding/json does by its json
// tags (name and omitempty), writing a NaN or infinite float field as null.
// Its fields' own values go through encoding/json, so nested types of this
// package come back here.
func marshalFinite(v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	rt := rv.Type()
	var buf bytes.Buffer
	buf.WriteByte('{')
	first := true
	for i := range rt.NumField() {
		f := rt.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fv := rv.Field(i)
		if opts == "omitempty" && fv.IsZero() || opts == "omitempty" && fv.Kind() == reflect.Slice && fv.Len() == 0 {
			continue
		}
		if !first {
			buf.WriteByte(',')
		}
		first = false
		key, _ := json.Marshal(name)
		buf.Write(key)
		buf.WriteByte(':')
		if fv.Kind() == reflect.Float64 && (math.IsNaN(fv.Float()) || math.IsInf(fv.Float(), 0)) {
			buf.WriteString("null")
			continue
		}
		enc, err := json.Marshal(fv.Interface())
		if err != nil {
			return nil, fmt.Errorf("breakdown: encode %s.%s: %w", rt.Name(), f.Name, err)
		}
		buf.Write(enc)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
