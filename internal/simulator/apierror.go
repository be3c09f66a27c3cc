package simulator

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// apiError is an OpenAI-style error response:
// {"error":{"message":...,"type":...,"param":...,"code":...}}.
type apiError struct {
	Status  int
	Type    string // BadRequestError, NotFoundError, InternalServerError, ...
	Message string
	Param   string // the offending request field, "" when none
}

func (e *apiError) Error() string { return e.Message }

// errorBody is the wire form of an apiError.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    int     `json:"code"`
}

func (e *apiError) body() errorBody {
	d := errorDetail{Message: e.Message, Type: e.Type, Code: e.Status}
	if e.Param != "" {
		p := e.Param
		d.Param = &p
	}
	return errorBody{Error: d}
}

// marshal renders the error body; it cannot fail for these plain types.
func (e *apiError) marshal() []byte {
	b, _ := json.Marshal(e.body())
	return b
}

// detailJSON renders only the inner error object.
func (e *apiError) detailJSON() []byte {
	b, _ := json.Marshal(e.body().Error)
	return b
}

// badRequest is a 400 naming the field.
func badRequest(param, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "BadRequestError", Param: param, Message: fmt.Sprintf(format, args...)}
}

func errNotFound(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusNotFound, Type: "NotFoundError", Message: fmt.Sprintf(format, args...)}
}

func errMethod(got, want string) *apiError {
	return &apiError{Status: http.StatusMethodNotAllowed, Type: "MethodNotAllowed",
		Message: fmt.Sprintf("method %s not allowed; use %s", got, want)}
}

// errInternal is the simulated server failure of the fault flags.
func errInternal(message string) *apiError {
	return &apiError{Status: http.StatusInternalServerError, Type: "InternalServerError", Message: message}
}

// writeError writes e as the whole response.
func writeError(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	_, _ = w.Write(e.marshal()) // the client may be gone; nothing to do about it
}
