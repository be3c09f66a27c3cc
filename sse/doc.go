// Package sse reads and writes Server-Sent Events (text/event-stream) as
// used by OpenAI-compatible streaming endpoints.
//
// The Reader takes long lines: audio servers put a whole base64 WAV file on
// one "data:" line, and such lines reach hundreds of kilobytes, far beyond
// the 64 KiB that bufio.Scanner and most SSE libraries accept. It does cap
// a line and an event's data (DefaultMaxEventBytes, 16 MiB, or
// SetMaxEventBytes), so a server that never ends a line cannot make it
// buffer without bound: beyond the cap Next returns a *LimitError with the
// size seen. It reuses its buffers, so reading an event does not allocate
// once the buffers have grown to the stream's largest event. Readers made
// by a BufferPool share their read buffers: each holds one only while it
// has unread bytes, so thousands of idle streams do not hold one each.
//
// Parsing follows the WHATWG HTML "event stream interpretation" rules with
// three documented deviations that suit a benchmark client:
//   - an event still pending when the stream ends (no final blank line) is
//     dispatched rather than dropped, because servers that close the
//     connection right after the last "data:" line are common;
//   - an event that has an "event:" type but no "data:" line is dispatched
//     (browsers drop it); only blocks with neither data nor type, such as
//     comment keep-alives, are skipped;
//   - the last comment line before an event is reported in Event.Comment so
//     that servers can stamp events with their send time.
package sse
