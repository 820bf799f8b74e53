#!/usr/bin/env bash
# How big a typical two-run report is, and what it is made of: two `llmsweep demo` runs (each a
# throughput and a context sweep with every request recorded) in one `llmsweep report`.
#
#   benchmarks/report_size.sh        # builds the release binary first; about 80 s
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p llmsweep >/dev/null
bin=$PWD/target/release/llmsweep
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$out"
"$bin" demo --out a --label kpro5 >/dev/null
"$bin" demo --out b --label kpro6 >/dev/null
"$bin" report a/*.json b/*.json -o report.html >/dev/null
python3 - a/*.json b/*.json report.html <<'PY'
import os, re, sys
*bundles, report = sys.argv[1:]
html = open(report).read()
kb = lambda n: f"{n / 1024:7.0f} KB"
for b in bundles:
    print(f"bundle {os.path.basename(b):<40} {kb(os.path.getsize(b))}")
print(f"report (one file){'':<32} {kb(len(html.encode()))}")
parts = {
    "  embedded bundles (gzip+base64)": sum(len(m) for m in re.findall(
        r'<script[^>]*class="llmsweep-bundle"[^>]*>(.*?)</script>', html, re.S)),
    "  viewer: wasm + JS (gzip+base64)": sum(len(m) for m in re.findall(
        r'<script type="module">(.*?)</script>', html, re.S)),
    "  no-JS part: SVG charts": sum(len(m) for m in re.findall(r'<svg.*?</svg>', html, re.S)),
    "  styles": sum(len(m) for m in re.findall(r'<style>(.*?)</style>', html, re.S)),
}
for name, n in parts.items():
    print(f"{name:<48} {kb(n)}")
PY
