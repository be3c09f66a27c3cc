package simulator

import (
	"context"
	"net/http"

	"github.com/coder/websocket"
)

// This file holds the routes of a server that hosts a duplex model. WS
// /v1/duplex is the session of /v1/realtime?duplex=1 (realtime.go) in its
// native schema (duplex_native.go). A duplex-only server (Config.DuplexOnly), as vLLM-Omni
// serves a model whose pipeline declares a duplex plugin, keeps the duplex
// session, /v1/models, /health and /metrics, and chat only when the plugin
// supports it (Config.DuplexChat); every other turn-based route answers
// that it is not available, so that a benchmark of the wrong kind fails
// with a reason instead of measuring nothing.
//
// The WebSocket routes answer as upstream answers on a route whose handler
// is missing: the socket is accepted, one error event names what is not
// available, and the server closes it. Upstream's HTTP answer on such a
// route is not known; the simulator answers 404 with an OpenAI-style error
// whose message names the method and route.

// speechStreamUnavailable and plainRealtimeUnavailable are the error events
// of the WebSocket routes a duplex-only server does not serve, each in its
// endpoint's error shape.
func speechStreamUnavailable() map[string]any {
	return map[string]any{"type": "error", "message": "Streaming speech is not available"}
}

func plainRealtimeUnavailable() map[string]any {
	return map[string]any{"type": "error", "error": "Realtime API is not available", "code": "unsupported"}
}

// handleDuplex serves WS /v1/duplex: the duplex session in its native schema.
func (s *Server) handleDuplex(w http.ResponseWriter, r *http.Request) {
	s.serveWS(w, r, func(ctx context.Context, c *websocket.Conn) {
		s.serveDuplex(ctx, c, r.URL.Query(), nativeProjection{})
	})
}

// turnRoutes are the handlers of the turn-based routes: the server's own,
// or on a duplex-only server the answers that they are not available.
type turnRoutes struct {
	chat, speech, speechStream http.HandlerFunc
}

func (s *Server) turnRoutes() turnRoutes {
	if !s.cfg.DuplexOnly {
		return turnRoutes{chat: s.handleChat, speech: s.handleSpeech, speechStream: s.handleSpeechStream}
	}
	rt := turnRoutes{chat: s.notAvailable, speech: s.notAvailable, speechStream: s.notAvailableWS(speechStreamUnavailable())}
	if s.cfg.DuplexChat {
		rt.chat = s.handleChat
	}
	return rt
}

// notAvailable answers an HTTP route a duplex-only server does not serve.
func (s *Server) notAvailable(w http.ResponseWriter, r *http.Request) {
	served := "WS /v1/realtime?duplex=1, WS /v1/duplex"
	if s.cfg.DuplexChat {
		served += ", POST /v1/chat/completions"
	}
	writeError(w, errNotFound("%s %s is not available: this server hosts a duplex model and serves only %s, /v1/models and /health",
		r.Method, r.URL.Path, served))
}

// notAvailableWS answers a WebSocket route a duplex-only server does not
// serve: accept, send the error event, close.
func (s *Server) notAvailableWS(event map[string]any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.serveWS(w, r, func(ctx context.Context, c *websocket.Conn) { sendUnavailable(ctx, c, event) })
	}
}

// sendUnavailable sends the error event and closes the connection cleanly.
func sendUnavailable(ctx context.Context, c *websocket.Conn, event map[string]any) {
	if err := writeJSONWS(ctx, c, event); err != nil {
		return // the client is gone
	}
	_ = c.Close(websocket.StatusNormalClosure, "")
}
