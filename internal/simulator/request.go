package simulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
)

// maxBodyBytes bounds a request body (real requests carry base64 reference
// audio, so this is generous).
const maxBodyBytes = 32 << 20

// readBody reads a JSON request body, bounded by maxBodyBytes.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	if r.Method != http.MethodPost {
		return nil, errMethod(r.Method, "POST")
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, badRequest("", "request body exceeds %d bytes", mbe.Limit)
		}
		return nil, badRequest("", "reading request body: %v", err)
	}
	return b, nil
}

// decodeJSON unmarshals a request body into v, turning decoder errors into
// 400s that name the field and byte offset.
func decodeJSON(body []byte, v any) *apiError {
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("", "request body is empty; expected a JSON object")
	}
	err := json.Unmarshal(body, v)
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return badRequest("", "request body is not valid JSON: %v (byte offset %d)", se, se.Offset)
	case errors.As(err, &te):
		if te.Field == "" {
			return badRequest("", "request body: expected a JSON object, got JSON %s", te.Value)
		}
		return badRequest(te.Field, "%s: expected %s, got JSON %s (byte offset %d)", te.Field, kindName(te.Type), te.Value, te.Offset)
	default:
		return badRequest("", "request body: %v", err)
	}
}

// kindName names a Go type the way a JSON user thinks of it.
func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return kindName(t.Elem())
	default:
		return t.String()
	}
}

// checkModel answers a request for another model the way vLLM does.
func (s *Server) checkModel(model string) *apiError {
	if model == "" || model == s.cfg.Model {
		return nil
	}
	e := errNotFound("The model `%s` does not exist.", model)
	e.Param = "model"
	return e
}

// audioFormats are the format names the real server accepts.
func audioFormats() []string { return []string{"wav", "pcm", "flac", "mp3", "opus"} }

// normalizeFormat validates an audio format name: "" means wav, pcm16 means
// pcm; unknown names get the server's "Invalid audio format" 400.
// Compressed formats are valid names the simulator produces for chat only.
func normalizeFormat(param, f string, extra ...string) (string, *apiError) {
	switch f {
	case "", "wav":
		return "wav", nil
	case "pcm", "pcm16":
		return "pcm", nil
	}
	names := append(audioFormats(), extra...)
	for _, n := range names {
		if f == n {
			return f, nil
		}
	}
	return "", badRequest(param, "Invalid audio format '%s' (%s; supported: %s, pcm16)", f, param, strings.Join(names, ", "))
}

// unsupportedFormat is the simulator's answer for compressed formats it does
// not produce (chat also produces flac).
func unsupportedFormat(param, f string) *apiError {
	return badRequest(param, "%s: audio format '%s' is not supported by the simulator; use wav or pcm", param, f)
}
