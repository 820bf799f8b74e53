#!/usr/bin/env python3
"""Helpers for benchmarks/side_by_side.sh (standard library only, except `tokenizer`).

  side_by_side.py tokenizer DIR              a character-level tokenizer for the Python clients
  side_by_side.py tokenizer-plain DIR        the same tokenizer, written without `tokenizers`
                                             (enough for vllm-bench and AIPerf)
  side_by_side.py calibrate URL EP_PID OUT   bytes the endpoint writes per 256-token request
  side_by_side.py measure --ep-pid P --out F --timeout S [--log L] -- CMD...
                                             run CMD; its CPU, memory, and what the endpoint sent
  side_by_side.py table RESULTS_DIR          the Markdown tables from a results folder

`measure` runs CMD in a session of its own and, until it exits (or is killed at the timeout):
every 5 ms reads the endpoint's /proc/PID/io `wchar` (bytes it wrote to its sockets); every 50 ms
sums the resident memory of CMD's whole process tree, and its proportional set size (shared
libraries counted once across GuideLLM's processes) at each new high. When CMD exits,
wait4() gives its user and system CPU time, including every child it waited for (GuideLLM's
worker processes), with microsecond resolution. The endpoint's bytes divided by the bytes of one
calibrated request count the requests it really streamed; the span from its first to its last
write is the wall time the tokens took, seen from the server's side.
"""

from __future__ import annotations

import glob
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


# ---------------------------------------------------------------- tokenizer


def make_tokenizer(out: str) -> None:
    """One token per printable ASCII character: no unknown tokens for GuideLLM's Faker text, and
    vLLM's random token ids decode and re-encode to the same length."""
    from tokenizers import Tokenizer, decoders, models  # only in the benchmark's virtualenv

    os.makedirs(out, exist_ok=True)
    special = ["[UNK]", "[BOS]", "[EOS]", "[PAD]"]
    chars = [chr(c) for c in range(32, 127)] + ["\n"]
    vocab = {t: i for i, t in enumerate(special + chars)}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="[UNK]"))
    tok.decoder = decoders.Fuse()
    tok.save(os.path.join(out, "tokenizer.json"))
    write_tokenizer_config(out)


def write_tokenizer_config(out: str) -> None:
    """What transformers' AutoTokenizer needs beside tokenizer.json."""
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "unk_token": "[UNK]",
        "bos_token": "[BOS]",
        "eos_token": "[EOS]",
        "pad_token": "[PAD]",
        "model_max_length": 1_000_000,
        "clean_up_tokenization_spaces": False,
    }
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump(config, f, indent=1)


def make_tokenizer_plain(out: str) -> None:
    """make_tokenizer's files, written as JSON: for vllm-bench (Rust `tokenizers`) and AIPerf when
    vllm and GuideLLM, and their virtualenv, are not run."""
    os.makedirs(out, exist_ok=True)
    special = ["[UNK]", "[BOS]", "[EOS]", "[PAD]"]
    vocab = {t: i for i, t in enumerate(special + [chr(c) for c in range(32, 127)] + ["\n"])}
    tok = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
        "normalizer": None, "pre_tokenizer": None, "post_processor": None,
        "decoder": {"type": "Fuse"},
        "model": {"type": "BPE", "dropout": None, "unk_token": "[UNK]",
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": []},
    }
    with open(os.path.join(out, "tokenizer.json"), "w") as f:
        json.dump(tok, f)
    write_tokenizer_config(out)


# ---------------------------------------------------------------- /proc readers


def wchar(pid: int) -> int:
    with open(f"/proc/{pid}/io") as f:
        for line in f:
            if line.startswith("wchar:"):
                return int(line.split()[1])
    raise RuntimeError(f"no wchar for {pid}")


def cpu_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime, all threads


def tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for kids in glob.glob(f"/proc/{p}/task/*/children"):
            try:
                with open(kids) as f:
                    todo.extend(int(k) for k in f.read().split())
            except OSError:
                pass
    return out


def rss_bytes(pids: list[int]) -> int:
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * PAGE
        except (OSError, IndexError, ValueError):
            pass
    return total


def pss_bytes(pids: list[int]) -> int:
    """Proportional set size: shared pages (torch's libraries in GuideLLM's worker processes)
    counted once across the tree, not once per process."""
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1]) * 1024
                        break
        except (OSError, IndexError, ValueError):
            pass
    return total


def clock_offset() -> float:
    """time.time() − CLOCK_MONOTONIC, to put GuideLLM's wall-clock stamps on the endpoint's clock."""
    best = None
    for _ in range(5):
        a = time.monotonic()
        w = time.time()
        b = time.monotonic()
        if best is None or b - a < best[0]:
            best = (b - a, w - (a + b) / 2)
    return best[1]


def loadavg() -> list[float]:
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


# ---------------------------------------------------------------- calibrate


def http_stream(url: str, max_tokens: int) -> None:
    host, port = url.removeprefix("http://").split(":")
    body = json.dumps(
        {"model": "llmsweep-selftest", "prompt": "calibrate", "max_tokens": max_tokens, "stream": True}
    ).encode()
    head = (
        f"POST /v1/completions HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(head + body)
        while s.recv(65536):
            pass


def calibrate(url: str, ep_pid: int, out: str) -> None:
    """Bytes the endpoint writes for one 256-token request (median of 5)."""
    sizes = []
    for _ in range(5):
        before = wchar(ep_pid)
        http_stream(url, 256)
        time.sleep(0.05)
        sizes.append(wchar(ep_pid) - before)
    with open(out, "w") as f:
        json.dump({"bytes_per_256_token_request": statistics.median(sizes), "samples": sizes}, f)


# ---------------------------------------------------------------- measure


def measure(argv: list[str]) -> int:
    opts: dict[str, str] = {}
    while argv and argv[0] != "--":
        opts[argv[0].lstrip("-")] = argv[1]
        argv = argv[2:]
    cmd = argv[1:]
    ep = int(opts["ep-pid"])
    timeout = float(opts.get("timeout", "600"))
    log = open(opts.get("log", os.devnull), "w")
    load_before = loadavg()
    ep_bytes0, ep_ticks0 = wchar(ep), cpu_ticks(ep)
    t0 = time.monotonic()
    child = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    first_write = last_write = None
    last_bytes = ep_bytes0
    writes = []  # (seconds from start, bytes so far) whenever the endpoint wrote
    peak_tree_rss = peak_tree_pss = 0
    last_pss, pss_gap = float("-inf"), 0.05
    offset_before = clock_offset()
    timed_out = False
    n = 0
    status = ru = None
    while True:
        pid, status, ru = os.wait4(child.pid, os.WNOHANG)
        now = time.monotonic()
        if pid:
            break
        b = wchar(ep)
        if b != last_bytes:
            if first_write is None:
                first_write = now
            last_write = now
            last_bytes = b
            writes.append((round(now - t0, 4), b - ep_bytes0))
        if n % 10 == 0:
            # RSS every 50 ms (cheap); PSS (about 15 ms of kernel time per GB of mappings)
            # when the tree's RSS reaches a new high, at most a tenth of the time, and every 2 s.
            pids = tree(child.pid)
            rss = rss_bytes(pids)
            if (rss > peak_tree_rss * 1.02 and now - last_pss > pss_gap) or now - last_pss > 2:
                peak_tree_pss = max(peak_tree_pss, pss_bytes(pids))
                last_pss = time.monotonic()
                pss_gap = max(0.05, 10 * (last_pss - now))  # at most a tenth of a core
            peak_tree_rss = max(peak_tree_rss, rss)
        n += 1
        if not timed_out and now - t0 > timeout:
            timed_out = True
            os.killpg(child.pid, signal.SIGTERM)
            kill_at = now + 5
        if timed_out and now > kill_at:
            os.killpg(child.pid, signal.SIGKILL)
        time.sleep(0.005)
    wall = time.monotonic() - t0
    b = wchar(ep)
    if b != last_bytes:
        first_write = first_write or now
        last_write = now
        writes.append((round(now - t0, 4), b - ep_bytes0))
    result = {
        "cmd": cmd,
        "rc": os.waitstatus_to_exitcode(status),
        "timed_out": timed_out,
        "wall_s": wall,
        "user_s": ru.ru_utime,
        "sys_s": ru.ru_stime,
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "maxrss_bytes": ru.ru_maxrss * 1024,
        "peak_tree_rss_bytes": peak_tree_rss,
        "peak_tree_pss_bytes": peak_tree_pss,
        "wall_minus_monotonic_s": (offset_before + clock_offset()) / 2,
        "endpoint": {
            "bytes": b - ep_bytes0,
            "cpu_s": (cpu_ticks(ep) - ep_ticks0) / CLK_TCK,
            "window_s": (last_write - first_write) if first_write is not None else 0.0,
            "writes": writes,
        },
        "loadavg_before": load_before,
        "loadavg_after": loadavg(),
    }
    with open(opts["out"], "w") as f:
        json.dump(result, f, indent=1)
    return 0 if result["rc"] == 0 else 1


# ---------------------------------------------------------------- the tools' own numbers


def newest(pattern: str) -> str | None:
    files = sorted(glob.glob(pattern), key=os.path.getmtime)
    return files[-1] if files else None


def tool_numbers(kind: str, raw: str) -> dict:
    """What the tool itself reports: tokens, tok/s, TTFT p50/p99 (s), and extras."""
    if kind == "selftest":
        f = newest(os.path.join(raw, "*.json"))
        lv = json.load(open(f))["selftest"]["levels"][0]
        out = {
            "ok": lv["ok"],
            "tokens": lv["tokens"],
            "tok_s": lv["tok_s"],
            "own_cpu_us": lv.get("cpu_us_per_token"),
            "own_peak": lv.get("peak_rss_bytes"),
        }
        for k in ("ttft_error_s", "first_event_lag_s"):
            if k in lv:
                out[k] = lv[k]
        return out
    if kind == "throughput":
        f = newest(os.path.join(raw, "*.json"))
        p = json.load(open(f))["sweeps"][0]["points"][0]
        s = p["summary"]
        return {
            "ok": s["ok"],
            "tokens": s["output_tokens"],
            "tok_s": s["agg_tok_s"],
            "steady_tok_s": s["steady_tok_s"],
            "ttft_p50": s["ttft_s"]["p50"],
            "ttft_p99": s["ttft_s"]["p99"],
            "flags": p.get("flags"),
        }
    if kind in ("vllm", "vllm-bench"):  # vllm-bench writes vllm's result file
        d = json.load(open(os.path.join(raw, "result.json")))
        return {
            "ok": d["completed"],
            "tokens": d["total_output_tokens"],
            "tok_s": d["output_throughput"],
            "ttft_p50": d["median_ttft_ms"] / 1000,
            "ttft_p99": d["p99_ttft_ms"] / 1000,
        }
    if kind == "guidellm":
        d = json.load(open(os.path.join(raw, "benchmarks.json")))
        b = d["benchmarks"][0]
        m = b["metrics"]
        ttft = m["time_to_first_token_ms"]["successful"]
        return {
            "ok": m["request_totals"]["successful"],
            "sent": b["scheduler_metrics"]["requests_made"]["successful"],
            "tokens": m["output_token_count"]["successful"]["total_sum"],
            "tok_s": m["output_tokens_per_second"]["successful"]["mean"],
            "duration_s": b["duration"],
            "ttft_p50": ttft["percentiles"]["p50"] / 1000,
            "ttft_p99": ttft["percentiles"]["p99"] / 1000,
            "concurrency_p50": m["request_concurrency"]["successful"]["median"],
        }
    if kind == "aiperf":
        d = json.load(open(os.path.join(raw, "aiperf", "profile_export_aiperf.json")))
        ttft = d["time_to_first_token"]
        scale = {"ms": 1e-3, "s": 1.0, "us": 1e-6, "ns": 1e-9}[ttft["unit"]]
        return {
            "ok": round(d["completed_request_count"]["avg"]) if "completed_request_count" in d
            else round(d["request_count"]["avg"]),
            "tokens": d["total_output_tokens"]["avg"],
            "tok_s": d["output_token_throughput"]["avg"],
            "ttft_p50": ttft["p50"] * scale,
            "ttft_p99": ttft["p99"] * scale,
            "errors": len(d.get("error_summary") or []),
        }
    raise ValueError(kind)


# ---------------------------------------------------------------- table


def at_fraction(writes: list, total: float, frac: float) -> float:
    """Seconds into the run when the endpoint had written `frac` of its bytes (interpolated)."""
    goal = total * frac
    prev_t, prev_b = 0.0, 0.0
    for t, b in writes:
        if b >= goal:
            if b == prev_b:
                return t
            return prev_t + (t - prev_t) * (goal - prev_b) / (b - prev_b)
        prev_t, prev_b = t, b
    return writes[-1][0] if writes else 0.0


def endpoint_rate(e: dict, tokens_sent: float) -> float | None:
    """Tokens/s the endpoint streamed between 1 % and 99 % of its bytes: the tools' probes, a
    warm-up request and the pauses around them, at either end, do not count."""
    if not e.get("writes") or tokens_sent <= 0:
        return None
    span = at_fraction(e["writes"], e["bytes"], 0.99) - at_fraction(e["writes"], e["bytes"], 0.01)
    return 0.98 * tokens_sent / span if span > 0 else None


STAMP = re.compile(r" t(\d+)")


def first_stamp_s(text: str | None) -> float | None:
    m = STAMP.search(text or "")
    return int(m.group(1)) / 1e6 if m else None


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, max(0, round(q / 100 * (len(v) - 1))))]


def stamp_errors(kind: str, raw: str, first_s: float, offset: float) -> tuple[list, list]:
    """Per request, from the stamps in the streamed text (µs on CLOCK_MONOTONIC, when the
    endpoint sent each token): the client's first-token time minus the send stamp of that token
    (what the client adds), and the send stamp minus the client's request start minus the
    schedule (the endpoint's and the network's lateness, as this client starts its clock)."""
    err, lag = [], []
    if kind == "vllm":  # perf_counter: CLOCK_MONOTONIC
        d = json.load(open(os.path.join(raw, "result.json")))
        for st, ttft, text in zip(d["start_times"], d["ttfts"], d["generated_texts"]):
            sent = first_stamp_s(text)
            if sent is not None and ttft:
                err.append(st + ttft - sent)
                lag.append(sent - st - first_s)
    elif kind == "guidellm":  # time.time(): moved to CLOCK_MONOTONIC by the measured offset
        d = json.load(open(os.path.join(raw, "benchmarks.json")))
        for r in d["benchmarks"][0]["requests"]["successful"]:
            t = r["info"]["timings"]
            sent = first_stamp_s(r.get("output"))
            if sent is not None and t.get("first_token_iteration"):
                err.append(t["first_token_iteration"] - offset - sent)
                lag.append(sent - (t["request_start"] - offset) - first_s)
    return err, lag

CLIENTS = [
    ("selftest", "llmsweep selftest"),
    ("throughput", "llmsweep throughput"),
    ("vllm", "vllm bench serve"),
    ("vllm-bench", "vllm-bench"),
    ("guidellm", "GuideLLM"),
    ("aiperf", "AIPerf"),
]


def fmt(x, nd=0):
    if x is None or x != x:
        return "–"
    if nd == 0:
        return f"{x:,.0f}"
    return f"{x:,.{nd}f}"


def load_runs(res: str) -> list[dict]:
    runs = []
    for m in sorted(glob.glob(os.path.join(res, "runs", "*", "measure.json"))):
        d = os.path.dirname(m)
        meta = json.load(open(os.path.join(d, "meta.json")))
        r = {**meta, "measure": json.load(open(m)), "dir": d}
        try:
            r["tool"] = tool_numbers(meta["client"], os.path.join(d, "raw"))
        except Exception as e:  # a failed run still shows in the table
            r["tool"] = {"error": f"{type(e).__name__}: {e}"}
        runs.append(r)
    return runs


def table(res: str) -> None:
    runs = load_runs(res)
    cal = json.load(open(os.path.join(res, "calibration.json")))
    per_req = cal["bytes_per_256_token_request"]
    tiny = {r["client"]: r for r in runs if r["phase"] == "tiny"}
    flat = [r for r in runs if r["phase"] == "flat"]
    sched = [r for r in runs if r["phase"] == "scheduled"]
    rows: dict[tuple[int, str], dict] = {}

    print("### Flat out: 256-token streams, one token per event\n")
    print(
        "| C | client | requests | tok/s (tool) | tok/s (endpoint side) | CPU µs/token "
        "| CPU µs/token (tool's own) | peak RSS MiB (largest process) | peak PSS MiB (all processes) "
        "| kernel share of CPU | endpoint CPU (cores) | load avg |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in flat:
        m, t, e = r["measure"], r["tool"], r["measure"]["endpoint"]
        sent_req = e["bytes"] / per_req
        tokens_sent = sent_req * r["output_len"]
        ep_tok_s = endpoint_rate(e, tokens_sent)
        ti = tiny.get(r["client"])
        cpu_net = None
        if ti:
            tokens_tiny = ti["measure"]["endpoint"]["bytes"] / per_req * ti["output_len"]
            cpu_net = (m["cpu_s"] - ti["measure"]["cpu_s"]) / max(tokens_sent - tokens_tiny, 1) * 1e6
        rss = m["maxrss_bytes"] / 2**20
        pss = m.get("peak_tree_pss_bytes", 0) / 2**20
        ok = t.get("ok")
        if "error" in t or m["rc"] != 0:
            ok_s = f"failed (rc {m['rc']}{', timed out' if m['timed_out'] else ''})"
        else:
            ok_s = f"{ok}/{r['requests']}"
        own = t.get("own_cpu_us")
        ep_cores = e["cpu_s"] * ep_tok_s / tokens_sent if ep_tok_s else None
        la = m["loadavg_before"]
        print(
            f"| {r['concurrency']} | {dict(CLIENTS)[r['client']]} | {ok_s} | {fmt(t.get('tok_s'))} "
            f"| {fmt(ep_tok_s)} | {fmt(cpu_net, 2)} | {fmt(own, 2)} | {fmt(rss)} | {fmt(pss)} "
            f"| {m['sys_s'] / m['cpu_s'] * 100:.0f} % | {fmt(ep_cores, 2)} | {la[0]:.2f} {la[1]:.2f} {la[2]:.2f} |"
        )
        rows[(r["concurrency"], r["client"])] = {
            "tok_s": t.get("tok_s"),
            "ep_tok_s": ep_tok_s,
            "cpu": cpu_net,
            "ep_cpu_us": e["cpu_s"] / tokens_sent * 1e6 if tokens_sent else None,
            "counted": t.get("tokens"),
            "sent": tokens_sent,
        }
    print()
    print(
        "tok/s (tool): as the tool prints it. tok/s (endpoint side): tokens the endpoint streamed "
        "(its socket bytes / the bytes of one 256-token request), 98 % of them over the time "
        "between 1 % and 99 % of its bytes. CPU µs/token: user + system time of the client's "
        "process tree (wait4), minus a 1-request run of the same tool (start-up: imports, "
        "tokenizer, connections), over the tokens streamed beyond that run. Peak RSS: the largest "
        "single process (ru_maxrss); peak PSS: the whole process tree, sampled. Kernel share: "
        "system time over user + system time of the whole run, start-up included. "
        "Endpoint CPU: its CPU seconds over the streaming time.\n"
    )

    if any(k[1] == "vllm-bench" for k in rows):
        print("### Ratios against vllm-bench (flat out)\n")
        print(
            "| C | tok/s llmsweep selftest ÷ vllm-bench | llmsweep throughput ÷ vllm-bench "
            "| CPU/token vllm-bench ÷ llmsweep selftest | ÷ llmsweep throughput |"
        )
        print("|---:|---:|---:|---:|---:|")
        for c in sorted({k[0] for k in rows}):
            def vb(a, b, key):
                x, y = rows.get((c, a), {}).get(key), rows.get((c, b), {}).get(key)
                return f"{x / y:.2f}×" if x and y else "–"

            print(
                f"| {c} | {vb('selftest', 'vllm-bench', 'ep_tok_s')} | {vb('throughput', 'vllm-bench', 'ep_tok_s')} "
                f"| {vb('vllm-bench', 'selftest', 'cpu')} | {vb('vllm-bench', 'throughput', 'cpu')} |"
            )
        print()

    print("### Ratios (flat out)\n")
    print(
        "| C | tok/s llmsweep selftest ÷ vllm | ÷ GuideLLM | ÷ AIPerf | llmsweep throughput ÷ vllm "
        "| ÷ GuideLLM | ÷ AIPerf | CPU/token vllm ÷ llmsweep throughput | GuideLLM ÷ llmsweep "
        "throughput | AIPerf ÷ llmsweep throughput |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for c in sorted({k[0] for k in rows}):
        def ratio(a, b, key):
            x, y = rows.get((c, a), {}).get(key), rows.get((c, b), {}).get(key)
            return f"{x / y:.1f}×" if x and y else "–"

        print(
            f"| {c} | {ratio('selftest', 'vllm', 'ep_tok_s')} | {ratio('selftest', 'guidellm', 'ep_tok_s')} "
            f"| {ratio('selftest', 'aiperf', 'ep_tok_s')} "
            f"| {ratio('throughput', 'vllm', 'ep_tok_s')} | {ratio('throughput', 'guidellm', 'ep_tok_s')} "
            f"| {ratio('throughput', 'aiperf', 'ep_tok_s')} "
            f"| {ratio('vllm', 'throughput', 'cpu')} | {ratio('guidellm', 'throughput', 'cpu')} "
            f"| {ratio('aiperf', 'throughput', 'cpu')} |"
        )
    print("\n(tok/s ratios from the endpoint-side rates; the tools' own rates are in the table above.)\n")

    print("### Tokens each tool counted against what the endpoint streamed\n")
    print("| C | client | counted by the tool | streamed (endpoint) | counted ÷ streamed |")
    print("|---:|---|---:|---:|---:|")
    for (c, client), v in sorted(rows.items()):
        cnt, sent = v["counted"], v["sent"]
        print(
            f"| {c} | {dict(CLIENTS)[client]} | {fmt(cnt)} | {fmt(sent)} "
            f"| {cnt / sent:.4f} |" if cnt and sent else f"| {c} | {dict(CLIENTS)[client]} | – | – | – |"
        )
    print()

    print("### Endpoint cost\n")
    print("| C | reader | endpoint CPU µs per token it sent | its CPU use (cores) while streaming |")
    print("|---:|---|---:|---:|")
    for r in flat:
        e = r["measure"]["endpoint"]
        tokens_sent = e["bytes"] / per_req * r["output_len"]
        rate = endpoint_rate(e, tokens_sent)
        if tokens_sent and rate:
            print(
                f"| {r['concurrency']} | {dict(CLIENTS)[r['client']]} | {e['cpu_s'] / tokens_sent * 1e6:.3f} "
                f"| {e['cpu_s'] * rate / tokens_sent:.2f} |"
            )
    print()

    if sched:
        print("### Scheduled endpoint: first token 300 ms after the request arrives, then one every 10 ms\n")
        print(
            "| C | client | requests | TTFT p50 − 300 ms | TTFT p99 − 300 ms "
            "| first token seen − sent, p50 / p99 | sent − request start − 300 ms, p50 / p99 | load avg |"
        )
        print("|---:|---|---:|---:|---:|---:|---:|---|")
        ms = lambda x: "–" if x is None else f"{x * 1e3:.2f}"
        for r in sched:
            t, m = r["tool"], r["measure"]
            first = r["first_ms"] / 1000
            name = dict(CLIENTS)[r["client"]]
            if "error" in t:
                print(f"| {r['concurrency']} | {name} | failed | | | | | |")
                continue
            p50 = p99 = None
            err = lag = None
            if r["client"] == "selftest":
                e, l = t.get("ttft_error_s", {}), t.get("first_event_lag_s", {})
                err = f"{ms(e.get('p50'))} / {ms(e.get('p99'))} ms"
                lag = f"{ms(l.get('p50'))} / {ms(l.get('p99'))} ms"
            else:
                p50, p99 = t["ttft_p50"] - first, t["ttft_p99"] - first
                if r["client"] in ("vllm", "guidellm"):
                    es, ls = stamp_errors(
                        r["client"], os.path.join(r["dir"], "raw"), first, m.get("wall_minus_monotonic_s", 0)
                    )
                    if es:
                        err = f"{ms(pct(es, 50))} / {ms(pct(es, 99))} ms"
                        lag = f"{ms(pct(ls, 50))} / {ms(pct(ls, 99))} ms"
            la = m["loadavg_before"]
            print(
                f"| {r['concurrency']} | {name} | {t.get('ok')}/{r['requests']} "
                f"| {ms(p50)} ms | {ms(p99)} ms | {err or '–'} | {lag or '–'} "
                f"| {la[0]:.2f} {la[1]:.2f} {la[2]:.2f} |".replace("– ms", "–")
            )
        print(
            "\nTTFT − 300 ms: each tool's own TTFT percentile minus the endpoint's schedule. The "
            "streamed text carries each token's send time (CLOCK_MONOTONIC µs), so the next column "
            "is what the client itself adds: when it saw the first token minus when the endpoint "
            "sent it (llmsweep selftest's own TTFT error; for vllm and GuideLLM computed from their "
            "per-request records). The last column is the rest: the send stamp minus the client's "
            "request start minus 300 ms (vllm-bench's start times count from its own start, not a clock the stamps share, so it has neither) (the request's way to the endpoint and the endpoint's "
            "lateness under load, from where each client starts its clock: llmsweep just before "
            "writing the request on an open connection, vllm before asking aiohttp for a "
            "connection, GuideLLM when the request's headers start to be written). `llmsweep "
            "throughput` is llmsweep's sweep path, whose bundle keeps no send stamps.\n"
        )

    print("### Start-up of each tool (the 1-request run subtracted above)\n")
    print("| client | wall s | CPU s | peak RSS MiB (largest process) | peak PSS MiB (all) |")
    print("|---|---:|---:|---:|---:|")
    for client, name in CLIENTS:
        if client in tiny:
            m = tiny[client]["measure"]
            print(
                f"| {name} | {m['wall_s']:.2f} | {m['cpu_s']:.2f} | {m['maxrss_bytes'] / 2**20:.0f} "
                f"| {m.get('peak_tree_pss_bytes', 0) / 2**20:.0f} |"
            )
    print()


def main() -> int:
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "tokenizer":
        make_tokenizer(args[0])
    elif cmd == "tokenizer-plain":
        make_tokenizer_plain(args[0])
    elif cmd == "calibrate":
        calibrate(args[0], int(args[1]), args[2])
    elif cmd == "measure":
        return measure(args)
    elif cmd == "table":
        table(args[0])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
