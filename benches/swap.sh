#!/usr/bin/env bash
# What reading a judge's model requests costs it (issue 46: a placeholder in the judge, the live
# credential swapped in by its proxy, which speaks TLS as the model's host): the same requests
# sent straight to a local TLS model server and through a judge's proxy that terminates TLS
# with the run's authority, swaps the credential and sends them on over TLS of its own.
# Per request on one kept connection, and per new connection with its first request (its
# handshakes: the judge's with the proxy, the proxy's with the model).
# Goal: under 5 ms a request on this machine.
# Usage: benches/swap.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release --quiet --lib bench_tls_termination -- --ignored --nocapture 2>&1 |
	grep -E '^(request|new connection)'
