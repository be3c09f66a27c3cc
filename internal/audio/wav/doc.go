// Package wav parses and writes RIFF/WAVE headers for PCM audio.
//
// Streaming audio servers send WAV in several shapes: a complete file per
// chunk (a canonical 44-byte header, or one with LIST and other chunks
// before "data"), or one header at the start of a raw byte stream whose
// size fields are 0xFFFFFFFF because the length is not known yet. The
// parser walks the chunk list instead of assuming a 44-byte header, and
// its errors name the byte offset and what was found there.
//
// Only PCM is accepted (format tag 1, or WAVE_FORMAT_EXTENSIBLE with the
// PCM sub-format); any whole number of bytes per sample parses, though the
// rest of omnibench does its audio arithmetic on 16-bit samples.
package wav
