package abtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/omnibench/omnibench/internal/experiment/compare"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/runner"
	"github.com/omnibench/omnibench/internal/secret"
	"github.com/omnibench/omnibench/internal/simulator"
	"github.com/omnibench/omnibench/scrape"
	"github.com/omnibench/omnibench/stats"
)

// DefaultRounds is the number of rounds per arm when Config.Rounds is 0:
// the smallest number that gives the order A B B A, in which linear drift
// cancels.
const DefaultRounds = 2

// Config describes an A/B run.
type Config struct {
	A, B Arm

	// Run is the template of every round. Run.Load.Requests and
	// Run.Load.Duration are per-arm totals that abtest splits across the
	// rounds; Run.Load.Warmup is the number of warm-up requests at the start
	// of every round of both arms. Run.Seed is the seed of round 0. abtest
	// sets Target, Scrape (off: it scrapes once per arm itself), Out and the
	// per-round seeds; Run.OnRecord, when set, still sees every record.
	// Run.Settle is the wait before each arm's /metrics scrape.
	Run runner.Config

	Rounds int // rounds per arm; 0 means DefaultRounds

	// Stats sets alpha, power, the deciding test and the percentiles of the
	// per-arm summaries (95 is always added: the report shows p95).
	Stats stats.Options

	// Gates are regression gates on the compared metrics (Metrics); with
	// any, B must also not fail more often than A beyond chance (the
	// failure-rate gate, compare.EvaluateFailures). A failed gate makes Run
	// return a *compare.RegressionError with the analysed Result.
	Gates []compare.Gate
	// AllowSaturated gives a verdict even when an arm was measured by a
	// saturated load generator; without it Run refuses (compare.ErrSaturated).
	AllowSaturated bool
	// Throughput also compares requests/s and audio s/s across the rounds
	// (throughput.go): the load must be a closed loop (Run.Load.Concurrency
	// workers, no rate), meant to saturate the server, and there must be at
	// least MinThroughputRounds rounds.
	Throughput bool

	StartupTimeout time.Duration // for a server command to answer /health; 0 means DefaultStartupTimeout
	StopGrace      time.Duration // between SIGTERM and SIGKILL; 0 means DefaultStopGrace

	// OutDir, when set, receives a.jsonl and b.jsonl (every record of each
	// arm, readable by `omnibench compare`), a-metrics.prom and
	// b-metrics.prom (the /metrics snapshots), ab.json (the result) and the
	// server logs. Without it, server logs go to a new temporary directory
	// (Result.LogDir), which is kept so that they can be read.
	OutDir string
}

// File names inside Config.OutDir.
const (
	ResultFile = "ab.json"
)

// resultsFile, metricsFile and logFile name an arm's files.
func resultsFile(arm string) string { return strings.ToLower(arm) + ".jsonl" }
func metricsFile(arm string) string { return strings.ToLower(arm) + "-metrics.prom" }
func logFile(arm string) string     { return strings.ToLower(arm) + "-server.log" }

// Order returns the arm of every slot of an interleaved run of rounds
// rounds per arm: A B, B A, A B, B A, ... so that each arm is as often
// first as second in a pair and linear drift cancels over every four slots.
func Order(rounds int) []string {
	out := make([]string, 0, 2*rounds)
	for r := 0; r < rounds; r++ {
		if r%2 == 0 {
			out = append(out, "A", "B")
		} else {
			out = append(out, "B", "A")
		}
	}
	return out
}

// RoundSeed returns the seed of round r: the run's seed for round 0 (so a
// one-round A/B uses the prompts of `omnibench run --seed seed`), a
// well-mixed value derived from (seed, r) after that. Both arms use the same
// seed in the same round.
func RoundSeed(seed int64, r int) int64 {
	if r == 0 {
		return seed
	}
	return int64(splitmix64(uint64(seed) ^ splitmix64(uint64(r))))
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// split divides total into parts as equal as possible, larger parts first.
func split(total, parts int) []int {
	out := make([]int, parts)
	for i := range out {
		out[i] = total / parts
		if i < total%parts {
			out[i]++
		}
	}
	return out
}

func (c Config) withDefaults() (Config, error) {
	if c.Rounds == 0 {
		c.Rounds = DefaultRounds
	}
	if c.StartupTimeout == 0 {
		c.StartupTimeout = DefaultStartupTimeout
	}
	if c.StopGrace == 0 {
		c.StopGrace = DefaultStopGrace
	}
	if c.Run.Log == nil {
		c.Run.Log = io.Discard
	}
	if c.Stats.Alpha == 0 {
		c.Stats.Alpha = 0.05
	}
	if c.Stats.Power == 0 {
		c.Stats.Power = 0.8
	}
	if c.Stats.Percentiles == nil {
		c.Stats.Percentiles = stats.DefaultPercentiles()
	}
	if !containsFloat(c.Stats.Percentiles, 95) {
		c.Stats.Percentiles = append(append([]float64(nil), c.Stats.Percentiles...), 95)
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("abtest: "+format, args...)) }
	if err := c.A.validate("A"); err != nil {
		errs = append(errs, fmt.Errorf("abtest: %w", err))
	}
	if err := c.B.validate("B"); err != nil {
		errs = append(errs, fmt.Errorf("abtest: %w", err))
	}
	if c.Rounds < 1 {
		bad("rounds must be >= 1, got %d", c.Rounds)
	}
	if c.Run.Workload == nil {
		bad("no workload")
	}
	l := c.Run.Load
	if l.Requests == 0 && l.Duration == 0 {
		bad("set the requests per arm or a duration")
	}
	if l.Requests > 0 && l.Requests < c.Rounds {
		bad("%d requests per arm cannot be split into %d rounds (want at least one request per round)", l.Requests, c.Rounds)
	}
	if c.Throughput && c.Rounds < MinThroughputRounds {
		bad("a throughput comparison needs at least %d rounds per arm (Welch's test across rounds), got %d", MinThroughputRounds, c.Rounds)
	}
	if c.Throughput && l.Rate > 0 {
		bad("a throughput comparison runs a closed loop: set the concurrency, not a rate (%g/s)", l.Rate)
	}
	if c.StartupTimeout < 0 || c.StopGrace < 0 {
		bad("start-up timeout %v and stop grace %v must not be negative", c.StartupTimeout, c.StopGrace)
	}
	if !(c.Stats.Alpha > 0 && c.Stats.Alpha < 1) {
		bad("alpha %v is not in (0, 1)", c.Stats.Alpha)
	}
	if !(c.Stats.Power > 0 && c.Stats.Power < 1) {
		bad("power %v is not in (0, 1)", c.Stats.Power)
	}
	for _, p := range c.Stats.Percentiles {
		if !(p >= 0 && p <= 100) {
			bad("percentile %v is not in [0, 100]", p)
		}
	}
	return c, errors.Join(errs...)
}

func containsFloat(xs []float64, v float64) bool {
	for _, x := range xs {
		if x == v {
			return true
		}
	}
	return false
}

// armState is one arm during a run.
type armState struct {
	name string // "A" or "B"
	spec Arm
	res  *ArmResult

	url string             // base URL of the arm's server while it runs
	sim *simulator.Running // embedded simulator
	srv *server            // managed server command

	file *os.File // results JSONL, when Config.OutDir is set

	stats *ArmStats // what the arm's /metrics showed about stats, once observed

	mu        sync.Mutex // guards the fields below (records arrive from request goroutines)
	writer    *results.Writer
	metrics   []compare.Metric // Metrics(): the values kept of each record
	kept      armSamples       // moved to res when the rounds end
	seqOffset int              // added to the runner's Seq in the current round
	nextSeq   int              // the next round's offset
	writeErr  error
}

// onRecord is the runner's OnRecord of a round: it numbers the record
// across the arm's rounds, keeps it and writes it to the arm's file.
func (st *armState) onRecord(next func(*results.Record)) func(*results.Record) {
	return func(rec *results.Record) {
		if next != nil {
			next(rec)
		}
		r := *rec
		st.mu.Lock()
		defer st.mu.Unlock()
		r.Seq += st.seqOffset
		r.ID = fmt.Sprintf("req-%06d", r.Seq)
		if r.Seq+1 > st.nextSeq {
			st.nextSeq = r.Seq + 1
		}
		st.kept.add(st.metrics, &r)
		if st.writer != nil && st.writeErr == nil {
			if err := st.writer.Write(&r); err != nil {
				st.writeErr = fmt.Errorf("abtest: arm %s: writing %s: %w", st.name, st.res.ResultsFile, err)
			}
		}
	}
}

// Run runs the A/B comparison. Once the arms are set up it returns a
// non-nil Result, also together with an error, so that callers can report
// what happened (the server pids, for example). The Result is analysed
// (Verdict set) when the run completed, or was interrupted: an interruption
// returns ctx's error wrapped, with the records gathered so far analysed
// and written. Every server Run started has been stopped and reaped when it
// returns, on every path.
//
// Run refuses a verdict (Verdict stays empty) with a *StatsMismatchError
// when an arm's /metrics does not show the stats it claims, and with an
// error naming the arm and round when a managed server exits or stops
// answering during a round. An analysed Result comes with Result.Err: a
// *compare.RegressionError when a gate failed, ErrArmBroken when the failure
// rates differ beyond chance, ErrNoSamples when an arm has no sample.
func Run(ctx context.Context, cfg Config) (res *Result, err error) {
	cfg, err = cfg.withDefaults()
	if err != nil {
		return nil, &configError{err}
	}
	logw := cfg.Run.Log
	res = &Result{
		Rounds: cfg.Rounds, Order: Order(cfg.Rounds), Seed: cfg.Run.Seed, Scenario: cfg.Run.Scenario,
		Alpha: cfg.Stats.Alpha, Power: cfg.Stats.Power, Test: cfg.Stats.Test, Percentiles: cfg.Stats.Percentiles,
		Concurrency: cfg.Run.Load.Concurrency, Rate: cfg.Run.Load.Rate, Warmup: cfg.Run.Load.Warmup,
		Requests: cfg.Run.Load.Requests, Duration: cfg.Run.Load.Duration, OutDir: cfg.OutDir,
	}
	if cfg.Throughput {
		res.Throughput = &ThroughputResult{}
	}
	arms := [2]*armState{newArmState("A", cfg.A), newArmState("B", cfg.B)}
	res.A, res.B = arms[0].res, arms[1].res
	defer func() {
		// Stop every server and close every file on every path out,
		// including panics in a round, errors and interruptions.
		for _, st := range arms {
			if cerr := st.close(cfg.StopGrace, logw); cerr != nil && err == nil {
				err = cerr
			}
		}
	}()

	if err := prepareDirs(&cfg, res, arms); err != nil {
		return nil, err
	}
	for _, st := range arms {
		if st.spec.Simulator != nil {
			if err := st.startSimulator(ctx); err != nil {
				return nil, err
			}
		}
	}

	reqs, durs := roundShares(cfg)
	for slot, name := range res.Order {
		st, other := arms[0], arms[1]
		if name == "B" {
			st, other = arms[1], arms[0]
		}
		share := roundShare{round: slot / 2, requests: reqs[slot/2], duration: durs[slot/2]}
		interrupted, err := playRound(ctx, cfg, res, arms, st, other, share)
		if interrupted {
			res.Interrupted = true
			break
		}
		if err != nil {
			return res, err
		}
	}
	return res, finish(ctx, cfg, res, arms)
}

// roundShare is one round of an arm and its share of the requests or the
// duration.
type roundShare struct {
	round    int
	requests int
	duration time.Duration
}

// playRound runs one arm's round: it starts the arm's managed server when
// needed, runs the workload, checks the server survived, and reads its
// /metrics when the round needs them. interrupted says ctx ended during
// it: the rounds stop, and what was measured is still analysed.
func playRound(ctx context.Context, cfg Config, res *Result, arms [2]*armState, st, other *armState, share roundShare) (interrupted bool, err error) {
	logw := cfg.Run.Log
	if ctx.Err() != nil {
		return true, nil
	}
	if st.spec.kind() == "command" && st.srv == nil {
		// One managed server at a time: a GPU rarely holds two
		// models, and the idle one's background work would disturb
		// the measured one.
		other.stopServer(cfg.StopGrace, logw)
		if err := st.startServer(ctx, cfg, logw); err != nil {
			return ctx.Err() != nil, err
		}
	}
	if err := st.openResults(cfg); err != nil {
		return false, err
	}
	fmt.Fprintf(logw, "omnibench ab: round %d/%d, arm %s (%s) at %s: %s\n",
		share.round+1, cfg.Rounds, st.name, st.res.Label, redactURL(st.url), shareText(share.requests, share.duration, cfg.Run.Load.Warmup))
	if interrupted, err := runRound(ctx, cfg, res, st, share); interrupted || err != nil {
		return interrupted, err
	}
	if err := st.checkAlive(ctx, share.round); err != nil {
		return ctx.Err() != nil, err
	}
	return observeRound(ctx, cfg, arms, st, share.round)
}

// runRound runs the workload of one round against st and keeps the round's
// throughput (res.Throughput).
func runRound(ctx context.Context, cfg Config, res *Result, st *armState, share roundShare) (interrupted bool, err error) {
	rcfg := cfg.Run
	rcfg.Target, rcfg.ServerInProcess = st.url, st.sim != nil
	rcfg.Scrape = runner.ScrapeOff
	rcfg.Out = nil
	rcfg.Seed = RoundSeed(cfg.Run.Seed, share.round)
	rcfg.Load.Seed = rcfg.Seed
	rcfg.Load.Requests = share.requests
	rcfg.Load.Duration = share.duration
	rcfg.OnRecord = st.onRecord(cfg.Run.OnRecord)
	st.mu.Lock()
	st.seqOffset = st.nextSeq
	st.mu.Unlock()
	st.res.Rounds++

	out, rerr := runner.Run(ctx, rcfg)
	if out != nil && out.Health != nil {
		st.res.observeHealth(share.round, out.Health)
	}
	if werr := st.writeError(); werr != nil {
		return false, werr
	}
	if ctx.Err() != nil {
		return true, nil
	}
	if rerr != nil {
		return false, fmt.Errorf("abtest: round %d, arm %s: %w", share.round+1, st.name, rerr)
	}
	if out != nil {
		res.Throughput.observe(st.name, share.round, out.Summary)
	}
	return false, nil
}

// observeRound reads st's /metrics after its last round (the sizes) and,
// until the arm's stats are known, after its first (the claimed stats),
// and refuses the experiment when the arms do not differ as claimed.
func observeRound(ctx context.Context, cfg Config, arms [2]*armState, st *armState, round int) (interrupted bool, err error) {
	var snap *scrape.Snapshot
	var serr error
	if round == cfg.Rounds-1 {
		snap, serr = st.measureMetrics(ctx, cfg)
	}
	if st.spec.Stats == StatsUnclaimed || st.stats != nil {
		return false, nil
	}
	if snap == nil && serr == nil {
		snap, serr = st.fetchMetrics(ctx, cfg)
	}
	if ctx.Err() != nil {
		return true, nil
	}
	st.observeStats(snap, serr)
	return false, verifyStats(arms)
}

// finish analyses the records gathered, writes the result file, and says
// how the run ended: interrupted, refused a verdict, or res.Err.
func finish(ctx context.Context, cfg Config, res *Result, arms [2]*armState) error {
	for _, st := range arms {
		st.mu.Lock()
		st.res.kept = st.kept
		st.mu.Unlock()
	}
	res.IncludeRamp = cfg.Run.Summary.IncludeRamp
	analyse(res, cfg.Stats, cfg.Gates)
	analyseThroughput(res, cfg.Stats)
	if res.Interrupted {
		res.Warnings = append(res.Warnings, "interrupted: the arms are incomplete and may be unbalanced; the figures cover what was measured")
	}
	refusal := refusal(res, cfg.AllowSaturated)
	if refusal != nil {
		res.refuse(refusal.Error())
	}
	if cfg.OutDir != "" {
		path := filepath.Join(cfg.OutDir, ResultFile)
		if err := writeJSONFile(path, res); err != nil {
			return fmt.Errorf("abtest: %w", err)
		}
	}
	if res.Interrupted {
		// ctx.Err is the cause (canceled by Ctrl-C, or a deadline), whatever
		// the round in flight made of it.
		return fmt.Errorf("abtest: interrupted: %w", ctx.Err())
	}
	if refusal != nil {
		return fmt.Errorf("abtest: no verdict: %w", refusal)
	}
	return res.Err()
}

// refusal says why res can give no verdict (nil when it can): an arm
// measured by a saturated load generator (unless allowed), or an arm
// without a successful measured request. A B that only failed fails its
// gates, when there are any: that is a verdict (a regression), not a
// refusal.
func refusal(res *Result, allowSaturated bool) error {
	for _, a := range []*ArmResult{res.A, res.B} {
		if a.Client != nil && a.Client.Saturated && !allowSaturated {
			return fmt.Errorf("arm %s (%s) was %w (%s): its latencies include up to %.1f ms of the client's own delay, "+
				"so a difference may be the client's; shard the load over processes or machines, or pass --allow-saturated",
				a.Name, a.Label, compare.ErrSaturated, strings.Join(a.Client.Reasons, "; "), a.Client.ClientDelayMS)
		}
	}
	if res.Throughput != nil {
		if err := res.Throughput.refusal(); err != nil {
			return err
		}
	}
	if re := (*compare.RegressionError)(nil); errors.As(res.Err(), &re) {
		return nil
	}
	for _, a := range []*ArmResult{res.A, res.B} {
		if a.Used == 0 {
			return fmt.Errorf("arm %s (%s): %w (%d requests, %d failed%s)", a.Name, a.Label, ErrNoSamples, a.Requests, a.Failed, firstErrorText(a))
		}
	}
	return nil
}

// ErrInvalidConfig is wrapped by the error Run returns for a Config it
// cannot run (no server, too few requests for the rounds, a bad alpha...).
var ErrInvalidConfig = errors.New("invalid A/B configuration")

// configError keeps the message of a configuration error and matches
// ErrInvalidConfig.
type configError struct{ err error }

func (e *configError) Error() string        { return e.err.Error() }
func (e *configError) Unwrap() error        { return e.err }
func (e *configError) Is(target error) bool { return target == ErrInvalidConfig }

// ErrNoSamples is returned (wrapped) when an arm has no successful measured
// request, so there is nothing to compare.
var ErrNoSamples = errors.New("no successful measured requests")

func firstErrorText(a *ArmResult) string {
	if a.FirstError == "" {
		return ""
	}
	return "; first error: " + a.FirstError
}

func newArmState(name string, spec Arm) *armState {
	ar := &ArmResult{Name: name, Label: spec.label(), Kind: spec.kind(), StatsClaim: spec.Stats.String()}
	if len(spec.Cmd) > 0 {
		ar.Command = RedactArgs(spec.Cmd)
	}
	if spec.kind() == "url" {
		ar.Target = redactURL(spec.URL)
	}
	return &armState{name: name, spec: spec, res: ar, url: trimSlash(spec.URL), metrics: Metrics()}
}

// prepareDirs creates the output directory and opens the results files, and
// picks the directory of the server logs.
func prepareDirs(cfg *Config, res *Result, arms [2]*armState) error {
	if cfg.OutDir != "" {
		if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
			return fmt.Errorf("abtest: output directory: %w", err)
		}
		res.LogDir = cfg.OutDir
	}
	if res.LogDir == "" && (cfg.A.kind() == "command" || cfg.B.kind() == "command") {
		dir, err := os.MkdirTemp("", "omnibench-ab-")
		if err != nil {
			return fmt.Errorf("abtest: directory for the server logs: %w", err)
		}
		res.LogDir = dir
		fmt.Fprintf(cfg.Run.Log, "omnibench ab: server logs go to %s\n", dir)
	}
	for _, st := range arms {
		if st.spec.kind() == "command" {
			st.res.ServerLog = filepath.Join(res.LogDir, logFile(st.name))
		}
	}
	return nil
}

// roundShares splits the per-arm requests and duration across the rounds.
func roundShares(cfg Config) (reqs []int, durs []time.Duration) {
	reqs = make([]int, cfg.Rounds)
	if n := cfg.Run.Load.Requests; n > 0 {
		reqs = split(n, cfg.Rounds)
	}
	durs = make([]time.Duration, cfg.Rounds)
	if d := cfg.Run.Load.Duration; d > 0 {
		for i := range durs {
			durs[i] = d / time.Duration(cfg.Rounds)
		}
	}
	return reqs, durs
}

func shareText(n int, d time.Duration, warmup int) string {
	var parts []string
	if n > 0 {
		parts = append(parts, strconv.Itoa(n)+" requests")
	}
	if d > 0 {
		parts = append(parts, "for "+d.String())
	}
	if warmup > 0 {
		parts = append(parts, fmt.Sprintf("after %d warm-up", warmup))
	}
	return strings.Join(parts, " ")
}

func (st *armState) startSimulator(ctx context.Context) error {
	sc := *st.spec.Simulator
	sc.Addr = "127.0.0.1:0"
	// close stops it once the arm's last record is written.
	sim, err := simulator.StartEmbedded(ctx, sc)
	if err != nil {
		return fmt.Errorf("abtest: arm %s: %w", st.name, err)
	}
	st.sim, st.url = sim, sim.URL
	st.res.Target = sim.URL
	return nil
}

// startServer starts the arm's server command on a free port (or the port
// of its URL) and waits for it to be healthy.
func (st *armState) startServer(ctx context.Context, cfg Config, logw io.Writer) error {
	base := trimSlash(st.spec.URL)
	var port string
	var err error
	if base != "" {
		port, err = urlPort(base)
	} else {
		port, err = freePort()
		base = "http://127.0.0.1:" + port
	}
	if err != nil {
		return fmt.Errorf("abtest: arm %s: %w", st.name, err)
	}
	if st.spec.URL != "" {
		// A fixed port that already answers is another server (often one a
		// killed omnibench left behind): measuring it would be measuring
		// the wrong thing.
		if err := refuseBusyPort(ctx, base); err != nil {
			return fmt.Errorf("abtest: arm %s: %w", st.name, err)
		}
	}
	argv := substitutePort(st.spec.Cmd, port)
	red := cfg.Run.Redact.With(secret.FromArgs(argv)...).With(secret.FromURL(st.spec.URL)...)
	fmt.Fprintf(logw, "omnibench ab: arm %s: starting %s (log %s)\n", st.name, red.String(JoinArgs(RedactArgs(argv))), st.res.ServerLog)
	srv, err := startServer(ctx, st.name, argv, base, st.res.ServerLog, cfg.StartupTimeout, cfg.StopGrace, red)
	if srv != nil {
		st.res.ServerPIDs = append(st.res.ServerPIDs, srv.pid)
		st.res.ServerStarts++
	}
	if err != nil {
		return fmt.Errorf("abtest: %w", err) // srv, if any, is stopped and reaped
	}
	st.srv, st.url = srv, base
	st.res.Target = redactURL(base)
	fmt.Fprintf(logw, "omnibench ab: arm %s: server pid %d healthy at %s\n", st.name, srv.pid, redactURL(base))
	return nil
}

// stopServer stops the arm's managed server, if it runs.
func (st *armState) stopServer(grace time.Duration, logw io.Writer) {
	if st.srv == nil {
		return
	}
	fmt.Fprintf(logw, "omnibench ab: arm %s: stopping server pid %d\n", st.name, st.srv.pid)
	st.srv.stop(grace)
	st.srv = nil
}

// openResults creates the arm's results file and writes its header before
// the arm's first round: only then is the arm's URL known, and an arm that
// never ran leaves no file that is not a valid results file.
func (st *armState) openResults(cfg Config) error {
	if cfg.OutDir == "" || st.file != nil {
		return nil
	}
	path := filepath.Join(cfg.OutDir, resultsFile(st.name))
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("abtest: arm %s: %w", st.name, err)
	}
	st.file, st.res.ResultsFile = f, path
	flags := map[string]string{}
	for k, v := range cfg.Run.Flags {
		flags[k] = v
	}
	flags["ab-arm"] = st.name
	flags["ab-label"] = st.res.Label
	flags["ab-rounds"] = strconv.Itoa(cfg.Rounds)
	h := results.Header{
		SchemaVersion: results.SchemaVersion,
		Version:       cfg.Run.Version,
		StartedAt:     time.Now().UTC().Format(time.RFC3339Nano),
		Target:        redactURL(st.url),
		Simulator:     st.spec.Simulator != nil,
		Scenario:      cfg.Run.Scenario,
		Seed:          cfg.Run.Seed,
		Mode:          cfg.Run.Load.Mode(),
		Concurrency:   cfg.Run.Load.Concurrency,
		Rate:          cfg.Run.Load.Rate,
		Arrival:       cfg.Run.Load.Arrival,
		Flags:         flags,
	}
	w := results.NewWriter(cfg.Run.Redact.Writer(f))
	if err := w.WriteHeader(h); err != nil {
		return fmt.Errorf("abtest: arm %s: writing %s: %w", st.name, path, err)
	}
	st.mu.Lock()
	st.writer = w
	st.mu.Unlock()
	return nil
}

func (st *armState) writeError() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.writeErr
}

// checkAlive fails when the arm's managed server exited during the round
// or no longer answers GET /health: the round's failures are then the
// server's breakdown, not a property of the arm to compare.
func (st *armState) checkAlive(ctx context.Context, round int) error {
	if st.srv == nil {
		return nil
	}
	exited := func() error {
		return fmt.Errorf("abtest: arm %s: the server exited during round %d (%s); its output is in %s%s",
			st.name, round+1, st.srv.exitState(), st.srv.logPath, st.srv.tail())
	}
	if st.srv.exited() {
		return exited()
	}
	if err := st.srv.answers(ctx); err != nil {
		// A server that just died refuses connections before its exit is
		// reaped: give the reaper a moment, so the error says what happened.
		t := time.NewTimer(exitReapWait)
		defer t.Stop()
		select {
		case <-st.srv.done:
			return exited()
		case <-t.C:
		}
		return fmt.Errorf("abtest: arm %s: the server stopped answering during round %d (GET %s/health: %w); its output is in %s%s",
			st.name, round+1, redactURL(st.url), err, st.srv.logPath, st.srv.tail())
	}
	return nil
}

// exitReapWait bounds the wait for a server's exit to be reaped once it no
// longer answers.
const exitReapWait = time.Second

// measureMetrics scrapes the arm's /metrics in the text format (the format
// whose lines the original metrics design counts, docs/reference/metric-families.md,
// section 7) and measures it. A failure is
// recorded in the result, not fatal: the latency comparison stands alone.
// It returns the snapshot (nil when the fetch failed) and the fetch error.
func (st *armState) measureMetrics(ctx context.Context, cfg Config) (*scrape.Snapshot, error) {
	size := &MetricsSize{URL: redactURL(st.url + "/metrics")}
	st.res.Metrics = size
	snap, err := st.fetchMetrics(ctx, cfg)
	if err != nil {
		size.Error = err.Error()
		return nil, err
	}
	if err := size.measure(snap); err != nil {
		size.Error = err.Error()
	}
	if cfg.OutDir != "" {
		path := filepath.Join(cfg.OutDir, metricsFile(st.name))
		if err := snap.WriteFile(path); err != nil {
			size.Error = fmt.Sprintf("saving the snapshot: %v", err)
			return snap, nil
		}
		size.Snapshot = path
	}
	return snap, nil
}

// fetchMetrics scrapes the arm's /metrics in the text format after the
// settle wait: the one scrape of abtest, for the size and the stats check.
func (st *armState) fetchMetrics(ctx context.Context, cfg Config) (*scrape.Snapshot, error) {
	opts := cfg.Run.ScrapeOptions() // --scrape-timeout and the caps
	opts.Accept = scrape.AcceptText
	return opts.FetchSettled(ctx, st.url+"/metrics", cfg.Run.Settle)
}

// close stops the arm's servers and closes its results file.
func (st *armState) close(grace time.Duration, logw io.Writer) error {
	st.stopServer(grace, logw)
	if st.sim != nil {
		_ = st.sim.Close() // a serving error after the run changes nothing measured
		st.sim = nil
	}
	if st.file != nil {
		var werr error
		if c := st.res.Client; c != nil && st.writer != nil {
			// The arm's verdict over its rounds ends its results file, as
			// a run's does, so `compare a.jsonl b.jsonl` sees it too.
			werr = st.writer.WriteClient(*c)
		}
		err := errors.Join(werr, st.file.Sync(), st.file.Close())
		st.file = nil
		st.mu.Lock()
		st.writer = nil
		st.mu.Unlock()
		if err != nil {
			return fmt.Errorf("abtest: arm %s: %w", st.name, err)
		}
	}
	return nil
}
