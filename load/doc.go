// Package load decides when requests start: it turns a Config into arrivals
// and runs a caller-supplied Job for each one. It knows nothing of HTTP; the
// caller's Job sends the request and records the result.
//
// # Closed and open loop
//
// With Rate == 0 the run is a closed loop: Concurrency workers each run jobs
// back to back, so the offered load adapts to the server (a slow server
// receives fewer requests). A job's intended start equals its actual start.
//
// With Rate > 0 the run is an open loop: arrivals follow a Schedule that is
// computed before the run from Seed, and each job starts in its own goroutine
// at its scheduled offset whatever the server is doing. A job that starts late
// carries the lag (actual minus intended start) so the caller can measure
// latency from the intended time and avoid coordinated omission. Arrival
// processes: "constant" (every 1/Rate), "poisson" (exponential gaps, the
// default) and "gamma" (gamma gaps with shape Burstiness and mean 1/Rate, as
// vllm bench serve --burstiness; 1 is Poisson, below 1 is burstier, above 1
// more regular). The first arrival is at offset 0. In an open loop,
// MaxInflight caps the jobs running at once: an arrival that finds the cap
// reached is dropped, counted in Stats.Dropped and reported to
// Config.OnDrop; it is never silently lost. Concurrency does not cap an open
// loop; there it only sets the warm-up workers.
//
// # Ramps
//
// Closed loop: with RampUp the Concurrency workers start evenly over it
// (worker i of N at i·RampUp/N); with Stages (k6's stages) the number of
// active workers moves linearly over each stage from the previous target (0
// before the first), worker k running while the target is above k-1, and
// the run ends with the last stage. A worker ramped down finishes its job
// and takes no new one; a worker waiting for its start wakes when the
// count bound is used up or ctx is done. Open loop: with RampUp the rate
// rises linearly from RateStart to Rate, then holds: the seeded process is
// generated at rate 1 and each arrival moved to the offset where the
// integral of the rate reaches it, so the schedule stays reproducible.
// Arrivals started while the load is still changing carry Phase PhaseRamp
// and are counted in Stats.RampStarted; the caller decides whether they
// count (the report leaves them out by default).
//
// PeakConcurrency is the most jobs the load can run at once: how many
// connections the caller's client needs.
//
// # Stops
//
// A run stops issuing arrivals after Requests measured arrivals or, in an
// open loop, after the schedule reaches Duration (in a closed loop, once
// Duration has elapsed), whichever comes first; 0 disables a bound and at
// least one must be set. Jobs already running then finish; Run returns when
// the last one returned. An open-loop schedule is capped at MaxArrivals.
//
// # Warm-up
//
// The first Warmup arrivals (Seq 0..Warmup-1) are flagged Arrival.Warmup and
// run before the measured phase as a closed loop with Concurrency workers (1
// when Concurrency is 0; in an open loop at most MaxInflight). They do not
// share the measured schedule: the measured phase starts after the last
// warm-up job returned, with a fresh run start (Arrival.Start) and the
// schedule from offset 0, so warm-up neither shifts nor crowds it. Warm-up is
// bounded by its count and ctx only, not by Duration, and is excluded from
// every measured count in Stats. Measured arrivals have Seq Warmup,
// Warmup+1, ...; Seq is unique across the whole run.
//
// # Interruption
//
// When ctx is cancelled Run stops issuing arrivals at once. Running jobs keep
// a context that is not cancelled with ctx for Config.Grace more (0: none),
// so they can finish and be recorded; then their context is cancelled. Run
// returns after every job returned, with the statistics so far and an error
// wrapping ctx.Err(). Run starts no goroutine that outlives it.
//
// # Timing
//
// One scheduling goroutine sleeps on a single reusable time.Timer until each
// arrival's intended time, computed from the run start (never from the
// previous wake-up), so timer error does not accumulate. Go timers typically
// fire within tens of microseconds to a millisecond late; that error is part of
// the measured lag, and arrivals whose lag exceeds Config.LateThreshold
// (default DefaultLateThreshold, 10 ms) are counted in Stats.Late.
package load
