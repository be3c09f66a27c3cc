package scenarios

import (
	"fmt"
	"math"
)

// copyBody deep-copies a request body map so that each request owns its
// maps and slices (the client may add fields; requests run concurrently).
func copyBody(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = copyValue(v)
	}
	return out
}

func copyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return copyBody(x)
	case map[any]any:
		out := make(map[any]any, len(x))
		for k, v := range x {
			out[k] = copyValue(v)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, v := range x {
			out[i] = copyValue(v)
		}
		return out
	default:
		// YAML yields only scalars besides the three container types above,
		// and scalars are values.
		return x
	}
}

// checkJSONValue rejects what JSON cannot carry faithfully: mappings with
// non-string keys, and NaN or infinite numbers.
func checkJSONValue(v any) error {
	switch x := v.(type) {
	case map[any]any:
		for k := range x {
			return fmt.Errorf("mapping key %v is not a string; quote it", k)
		}
	case map[string]any:
		for k, v := range x {
			if err := checkJSONValue(v); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
	case []any:
		for i, v := range x {
			if err := checkJSONValue(v); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%v is not a JSON number", x)
		}
	}
	return nil
}
