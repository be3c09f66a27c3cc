"""An independent vLLM-Omni-like /metrics server for the breakdown tests.

It exposes, through the official Python client (prometheus_client), the
families the breakdown reads, with the pipeline families under the
vllm_omni: spelling of current servers. POST /advance records one run of
REQUESTS requests through a three-stage pipeline whose code2wav stage has
two replicas: replica 1 is three times slower than replica 0, and the edge
from the talker to code2wav replica 0 is slow in flight. The parts add up:
each request's pipeline e2e is its stages, its hops and REST.

With --stats-off the families are declared but never observed, as on a
server whose stats are off. It prints "port N" once listening on 127.0.0.1.
"""

import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

REQUESTS = 8
STAGE_S = {0: 0.05, 1: 0.04}
CODE2WAV_S = {0: 0.1, 1: 0.3}  # per replica: replica 1 is slow
HOP_THINKER = (0.001, 0.002, 0.001)  # tx, in flight, rx; one hop per request
HOP_CODEC = {0: (0.0005, 0.02, 0.0005), 1: (0.0005, 0.001, 0.0005)}  # into replica 0 is slow
CODEC_HOPS = 3  # per request
REST = 0.005
MODEL = "Qwen/Qwen3-Omni"

SECONDS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300)
FAST = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60)
REQUEST = (0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680)
BYTES = (1024, 4096, 16384, 65536, 262144, 1048576)
SR = ("model_name", "stage", "replica")
EDGE = ("model_name", "from_stage", "from_replica", "to_stage", "to_replica")


class Families:
    def __init__(self, registry):
        h = lambda name, labels, buckets: Histogram(name, name, labels, registry=registry, buckets=buckets)
        self.e2e = h("vllm_omni:e2e_request_latency_s", ("model_name",), SECONDS)
        self.ttfp = h("vllm_omni:audio_ttfp_s", SR, SECONDS)
        self.tx = h("vllm_omni:transfer_tx_s", EDGE, FAST)
        self.rx = h("vllm_omni:transfer_rx_s", EDGE, FAST)
        self.flight = h("vllm_omni:transfer_in_flight_s", EDGE, FAST)
        self.size = h("vllm_omni:transfer_size_bytes", EDGE, BYTES)
        self.stage = {
            part: h("vllm:" + name, SR, REQUEST)
            for part, name in (
                ("e2e", "e2e_request_latency_seconds"),
                ("queue", "request_queue_time_seconds"),
                ("prefill", "request_prefill_time_seconds"),
                ("decode", "request_decode_time_seconds"),
                ("ttft", "time_to_first_token_seconds"),
            )
        }
        self.tokens = Counter("vllm:generation_tokens", "tokens", SR, registry=registry)

    def observe_stage(self, stage, replica, seconds):
        labels = (MODEL, str(stage), str(replica))
        for part, value in (("e2e", seconds), ("queue", 0.0), ("prefill", seconds / 4),
                            ("decode", seconds * 3 / 4), ("ttft", seconds / 4)):
            self.stage[part].labels(*labels).observe(value)
        self.tokens.labels(*labels).inc(10)

    def hop(self, frm, to, times):
        labels = (MODEL, str(frm[0]), str(frm[1]), str(to[0]), str(to[1]))
        tx, flight, rx = times
        self.tx.labels(*labels).observe(tx)
        self.flight.labels(*labels).observe(flight)
        self.rx.labels(*labels).observe(rx)
        self.size.labels(*labels).observe(2048)

    def advance(self):
        for i in range(REQUESTS):
            replica = i % 2
            total = REST
            for stage, seconds in STAGE_S.items():
                self.observe_stage(stage, 0, seconds)
                total += seconds
            self.observe_stage(2, replica, CODE2WAV_S[replica])
            total += CODE2WAV_S[replica]
            self.hop((0, 0), (1, 0), HOP_THINKER)
            total += sum(HOP_THINKER)
            for _ in range(CODEC_HOPS):
                self.hop((1, 0), (2, replica), HOP_CODEC[replica])
                total += sum(HOP_CODEC[replica])
            self.e2e.labels(MODEL).observe(total)
            self.ttfp.labels(MODEL, "2", str(replica)).observe(total / 2)


def main():
    stats_off = "--stats-off" in sys.argv[1:]
    registry = CollectorRegistry()
    families = Families(registry)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            body = generate_latest(registry)
            self.send_response(200 if self.path == "/metrics" else 404)
            self.send_header("Content-Type", CONTENT_TYPE_LATEST)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            if not stats_off:
                families.advance()
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print("port", server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
