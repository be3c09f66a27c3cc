// Package input identifies the audio files that go into a request (a
// voice prompt, a voice-cloning reference clip) and measures their length
// without decoding them: WAV through the wav package, FLAC by its STREAMINFO
// block, MP3 by walking its frame headers. The format comes from the file's
// first bytes, never from its name. The client uses it to label and measure
// what it sends; the simulator uses it to check and measure what it receives.
package input
