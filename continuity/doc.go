// Package continuity judges whether a streamed audio response would have
// played without gaps, from nothing but the arrival time and byte count of
// each PCM chunk. It offers three listener models over the same Input.
//
// Simulate is the never-pausing player of the vLLM-Omni reference benchmark
// (docs/reference/continuity.md, section 2). Playback starts at the first arrival t0 and consumes
// bps = sample_rate * width * channels bytes per second whatever happens.
// Before chunk i the deficit is (t_i - t0)*bps minus the bytes received
// before i; a positive deficit is an underrun event and the largest deficit,
// in seconds, is max_underrun_s. The deficit is cumulative, so once the
// player falls behind, every later late-ish chunk counts again. max_underrun_s
// is also the smallest start-up delay that would have made the stream
// gapless. Reference mode reproduces the reference bit for bit, including
// the phantom events that rounding residue of large absolute timestamps
// creates; Default mode (omnibench's own) counts a deficit only when it is at
// least one sample frame.
//
// StallResume is what a simple real player does: start at the first arrival,
// play at real time, pause when the buffer runs dry and resume as soon as the
// next chunk arrives. It reports how many times and how long playback stalled.
//
// Preroll is a jitter-buffered player: it waits until PrerollConfig.BufferS
// seconds of audio have arrived (or MaxWaitS after the first arrival, or the
// end of the stream), then behaves like StallResume. It trades start-up delay
// for fewer stalls.
//
// PrerollTimeline runs the same player and also returns its playback
// position over time (Timeline), the curve a report draws; FixedStartup
// recreates a Preroll player from a recorded start-up delay.
//
// Worked example: 24 kHz mono s16 (bps = 48000), chunks arriving at
// 0, 0.10, 0.50 and 0.55 s with 9600, 4800, 9600 and 4800 bytes (0.2, 0.1,
// 0.2 and 0.1 s of audio).
//
//   - Simulate: at 0.10 the player has used 4800 of 9600 bytes (no deficit);
//     at 0.50 it wants 24000 but has 14400, a 9600-byte deficit = 0.20 s; at
//     0.55 it wants 26400 and has 24000, 2400 bytes = 0.05 s. Result:
//     max_underrun_s 0.20, 2 events; not continuous at 0.1 s, continuous at
//     0.25 s. Both modes agree here.
//   - StallResume: the 0.3 s received by 0.10 runs out at 0.30; the next
//     chunk comes at 0.50, a 0.20 s stall; playback resumes at 0.50 with
//     0.2 s buffered, so the chunk at 0.55 is in time. Result: start-up 0,
//     1 stall, 0.20 s total and longest; its Timeline is (0, 0), (0.3, 0.3),
//     (0.5, 0.3), (0.8, 0.6) as (time, position). The reference's second
//     event is the never-pausing player still being behind, not a second
//     gap.
//   - Preroll{BufferS: 0.25}: 0.2 s is buffered at 0, 0.3 s at 0.10, so
//     playback starts at 0.10 (start-up delay 0.10) and runs out at 0.40;
//     the chunk at 0.50 means one stall of 0.10 s. In general the stall-
//     resume total equals max_underrun_s and a pre-roll of start-up delay D
//     stalls for max(0, max_underrun_s - D) in total.
package continuity
