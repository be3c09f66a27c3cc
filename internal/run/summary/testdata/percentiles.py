"""Percentiles of a results file's figures with numpy, for numpy_test.go.

Reads the request lines of a results JSONL (argv[1]) and takes, with the
summary's definitions written out anew from the records' fields, the values
of several figures of the measured requests (not warm-up, not ramp); prints
for each figure its count and numpy.percentile (method "linear") at the
percentiles of argv[2] (comma-separated), as JSON.
"""
import json
import sys

import numpy


def figures(path):
    figs = {name: [] for name in (
        "e2e_ms", "ttft_ms", "ttfp_ms", "itl_ms", "rtf_e2e", "rtf_last_chunk",
        "audio_duration_s", "audio_underrun_s", "schedule_lag_ms", "client_queue_ms", "stamp_delay_ms")}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r.get("type") != "request" or r.get("warmup") or r.get("phase") == "ramp":
                continue
            lag = r.get("lag_s", 0.0)
            intended = r.get("latency_origin") == "intended"

            def latency(s):
                return s + lag if intended else s

            figs["schedule_lag_ms"].append(lag * 1000)
            figs["client_queue_ms"].append(r.get("queue_s", 0.0) * 1000)
            figs["stamp_delay_ms"] += [d * 1000 for d in r.get("stamp_delays_s", [])]
            if r.get("error_class"):
                continue
            figs["e2e_ms"].append(latency(r["e2e_s"]) * 1000)
            if r.get("ttft_s", 0.0) > 0:
                figs["ttft_ms"].append(latency(r["ttft_s"]) * 1000)
            figs["itl_ms"] += [g * 1000 for g in r.get("text_gaps_s", [])]
            if r.get("audio_bytes", 0) <= 0:
                continue
            figs["ttfp_ms"].append(latency(r.get("ttfp_s", 0.0)) * 1000)
            duration = r.get("audio_duration_s", 0.0)
            figs["audio_duration_s"].append(duration)
            if duration > 0:
                figs["rtf_e2e"].append(r.get("rtf_e2e", 0.0))
                figs["rtf_last_chunk"].append(r.get("rtf_last_chunk", 0.0))
            if r.get("continuity"):
                figs["audio_underrun_s"].append(r["continuity"]["max_underrun_s"])
    return figs


def main():
    percentiles = [float(p) for p in sys.argv[2].split(",")]
    out = {}
    for name, xs in figures(sys.argv[1]).items():
        values = numpy.array(xs, dtype=numpy.float64)
        out[name] = {
            "n": len(xs),
            "percentiles": [float(numpy.percentile(values, p, method="linear")) for p in percentiles] if xs else [],
        }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
