package sweep

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Axis is what a level measures.
type Axis string

// Axes.
const (
	Concurrency Axis = "concurrency" // closed loop: concurrent streams (whole numbers)
	Rate        Axis = "rate"        // open loop: arrivals per second
)

// MaxLevels bounds how many levels a list may expand to: each level is a
// whole run, so a typo such as 1:100000 is refused rather than run for days.
const MaxLevels = 100

// The largest levels accepted. One client process cannot hold more
// connections to one server than it has ephemeral ports (about 28,000 on
// Linux), nor schedule more than about a million arrivals a second; a
// larger level is a typo, and one near the float range (1e300) would make
// the arithmetic of a range meaningless.
const (
	MaxConcurrency = 100_000
	MaxRate        = 1e6
)

// Max is the largest level of axis a.
func (a Axis) Max() float64 {
	if a == Rate {
		return MaxRate
	}
	return MaxConcurrency
}

// ParseAxis accepts "concurrency" (or "c") and "rate".
func ParseAxis(s string) (Axis, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "concurrency", "c":
		return Concurrency, nil
	case "rate":
		return Rate, nil
	}
	return "", fmt.Errorf("unknown axis %q (want concurrency or rate)", s)
}

// Unit names a level's unit for people: "concurrent streams" or "req/s".
func (a Axis) Unit() string {
	if a == Rate {
		return "req/s"
	}
	return "concurrent streams"
}

// Label is the column header of a level: "concurrency" or "rate (req/s)".
func (a Axis) Label() string {
	if a == Rate {
		return "rate (req/s)"
	}
	return "concurrency"
}

// Format writes a level the way ParseLevels reads it: "8", "2.5".
func (a Axis) Format(v float64) string {
	if a == Concurrency {
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return strconv.FormatFloat(tidy(v), 'f', -1, 64)
}

// Quantity is a level with its unit: "8 concurrent streams", "2.5 req/s".
func (a Axis) Quantity(v float64) string {
	if a == Concurrency && v == 1 {
		return "1 concurrent stream"
	}
	return a.Format(v) + " " + a.Unit()
}

// tidy rounds v to 12 significant digits, so that levels computed as
// start + i*step print as written (0.1*3 shows as 0.3, not
// 0.30000000000000004) and compare equal after deduplication.
func tidy(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	s := strconv.FormatFloat(v, 'g', 12, 64)
	t, _ := strconv.ParseFloat(s, 64)
	return t
}

// ParseLevels parses a level list (see the package documentation for the
// syntax) for axis a. Errors quote the whole list and name the bad item.
func ParseLevels(a Axis, spec string) ([]float64, error) {
	if a != Concurrency && a != Rate {
		return nil, fmt.Errorf("levels: unknown axis %q", a)
	}
	if strings.TrimSpace(spec) == "" {
		return nil, fmt.Errorf("levels: empty list; want e.g. 1,2,4,8 or 1:16:x2")
	}
	var out []float64
	for i, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		bad := func(format string, args ...any) error {
			return fmt.Errorf("levels %q: item %d %q: %s", spec, i+1, item, fmt.Sprintf(format, args...))
		}
		if item == "" {
			return nil, bad("empty item (two commas, or a comma at an end)")
		}
		vals, err := parseItem(a, item)
		if err != nil {
			return nil, bad("%v", err)
		}
		out = append(out, vals...)
		if len(out) > MaxLevels {
			return nil, bad("the list expands to more than %d levels", MaxLevels)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// parseItem expands one item: a number or start:end[:step].
func parseItem(a Axis, item string) ([]float64, error) {
	parts := strings.Split(item, ":")
	switch len(parts) {
	case 1:
		v, err := level(a, parts[0], "level")
		if err != nil {
			return nil, err
		}
		return []float64{v}, nil
	case 2, 3:
	default:
		return nil, fmt.Errorf("a range has at most three parts, start:end:step")
	}
	start, err := level(a, parts[0], "range start")
	if err != nil {
		return nil, err
	}
	end, err := level(a, parts[1], "range end")
	if err != nil {
		return nil, err
	}
	if end < start {
		return nil, fmt.Errorf("range end %s is below its start %s", a.Format(end), a.Format(start))
	}
	step := "1"
	if len(parts) == 3 {
		step = strings.TrimSpace(parts[2])
	}
	if f, ok := strings.CutPrefix(step, "x"); ok {
		return geometric(a, start, end, f)
	}
	if f, ok := strings.CutPrefix(step, "*"); ok {
		return geometric(a, start, end, f)
	}
	return arithmetic(a, start, end, step)
}

func arithmetic(a Axis, start, end float64, stepText string) ([]float64, error) {
	step, err := strconv.ParseFloat(stepText, 64)
	if err != nil || math.IsNaN(step) || math.IsInf(step, 0) {
		return nil, fmt.Errorf("step %q is not a number (or xN for a geometric range)", stepText)
	}
	if step <= 0 {
		return nil, fmt.Errorf("step %q must be greater than 0", stepText)
	}
	if a == Concurrency && step != math.Trunc(step) {
		return nil, fmt.Errorf("step %q: concurrency steps are whole numbers", stepText)
	}
	// The count is fixed before the loop: a step too small to change the
	// sum (1e300 + 1 == 1e300) must not loop. The end counts as hit within
	// a millionth of a step.
	n := math.Floor((end-start)/step+1e-6) + 1
	if n > MaxLevels {
		return nil, fmt.Errorf("the range has more than %d levels (%.4g)", MaxLevels, n)
	}
	out := make([]float64, 0, int(n))
	// start + i*step rather than repeated addition, so no error accumulates.
	for i := range int(n) {
		out = append(out, tidy(start+float64(i)*step))
	}
	return slices.Compact(out), nil
}

func geometric(a Axis, start, end float64, factorText string) ([]float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(factorText), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("factor %q is not a number", factorText)
	}
	if f <= 1 {
		return nil, fmt.Errorf("factor %q must be greater than 1", factorText)
	}
	var out []float64
	for i := 0; ; i++ {
		v := start * math.Pow(f, float64(i))
		if v > end*(1+1e-9) {
			break
		}
		if a == Concurrency {
			v = math.Round(v)
		}
		out = append(out, tidy(v))
		if i > MaxLevels {
			return nil, fmt.Errorf("the range has more than %d levels", MaxLevels)
		}
	}
	return slices.Compact(out), nil
}

// level parses one level value.
func level(a Axis, s, what string) (float64, error) {
	s = strings.TrimSpace(s)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s %q is not a number", what, s)
	}
	switch a {
	case Concurrency:
		if v != math.Trunc(v) || v < 1 {
			return 0, fmt.Errorf("%s %q: concurrency is a whole number of at least 1", what, s)
		}
	case Rate:
		if v <= 0 {
			return 0, fmt.Errorf("%s %q: a rate must be greater than 0", what, s)
		}
	}
	if v > a.Max() {
		why := "one process has about 28,000 ports toward a server"
		if a == Rate {
			why = "one process schedules at most about a million arrivals a second"
		}
		return 0, fmt.Errorf("%s %q: more than %s, beyond what one client can drive (%s)", what, s, a.Quantity(a.Max()), why)
	}
	return v, nil
}
