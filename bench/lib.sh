# Shell helpers shared by the benchmarks in bench/; sourced, not run.
#
# The sourcing script sets `bench_name` (for messages) and `work` (a private temporary directory)
# before calling the functions that need them, and stops what they start in its own EXIT trap.

log() { printf '[%s %s] %s\n' "${bench_name:-bench}" "$(date +%H:%M:%S)" "$*" >&2; }
die() { echo "$bench_name: $*" >&2; exit 1; }

# The daemons benchmarked here do not take MPD's port 6600 unless a benchmark gives them one.
export REEL_MPD_LISTEN="${REEL_MPD_LISTEN:-none}"
export REEL_HTTP_LISTEN="${REEL_HTTP_LISTEN:-none}"

clk_tck=$(getconf CLK_TCK)
# utime+stime of the whole process (dead threads included), in clock ticks.
cpu_ticks() {
    local stat rest fields
    stat=$(<"/proc/$1/stat") || return 1
    rest=${stat##*) }
    read -ra fields <<<"$rest"
    echo $((fields[11] + fields[12]))
}
# Nanoseconds on a CPU, summed over the live threads (/proc/PID/task/*/schedstat): precise, but a
# thread that ends takes its time with it, so compare `threads` before and after.
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'; }
threads() { ls /proc/"$1"/task 2>/dev/null | sort -n | tr '\n' ' '; }
status_kb() { awk -v key="$2:" '$1 == key { print $2 }' "/proc/$1/status"; }
# Voluntary context switches summed over the live threads: how often the process sleeps.
wakeups() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '$1 == "voluntary_ctxt_switches:" { s += $2 } END { print s + 0 }'; }
now() { echo "$EPOCHREALTIME"; }
calc() { awk "BEGIN { printf \"%.6f\\n\", $1 }"; }     # arithmetic on decimals
is() { awk "BEGIN { exit !($1) }"; }                       # a comparison, as exit status
sink_inputs() { pactl list short sink-inputs 2>/dev/null | wc -l; }

# SIGTERM to one process we started, then wait for it (SIGKILL after 5 s). Usage: stop_pid PID
stop_pid() {
    local pid=$1 i
    [[ -n "$pid" ]] || return 0
    kill "$pid" 2>/dev/null || return 0
    for i in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

# Release build of reeld and reel-bench (or of the products named), as scripts/run builds them
# (the Swift runtime linked in statically: less resident memory). REEL_BENCH_SCRATCH=DIR builds
# in DIR. Sets reeld_bin, bench_bin.
build_release() { build_products release -c release --static-swift-stdlib -- "$@"; }

# Debug build of reeld (or of the products named), as a plain `swift build` makes it: much slower
# code, a stand-in for what a small machine (a Raspberry Pi) sees. REEL_BENCH_SCRATCH=DIR builds in
# DIR. Sets reeld_bin, bench_bin.
build_debug() { build_products debug -- "$@"; }

# Usage: build_products NAME [swift build flags...] -- [products...]
build_products() {
    local name=$1 build=() bin product products=()
    shift
    while (($#)) && [[ "$1" != "--" ]]; do build+=("$1"); shift; done
    (($#)) && shift
    products=("$@")
    ((${#products[@]})) || products=(reeld reel-bench)
    [[ -n "${REEL_BENCH_SCRATCH:-}" ]] && build+=(--scratch-path "$REEL_BENCH_SCRATCH")
    log "building $name ${products[*]}"
    for product in "${products[@]}"; do
        swift build "${build[@]}" --product "$product"
    done
    bin=$(swift build "${build[@]}" --show-bin-path)
    reeld_bin="$bin/reeld"
    bench_bin="$bin/reel-bench"
}

# A private PulseAudio with a null sink (real-time pacing, no sound card), its socket in $work.
# Sets pulse_pid and exports PULSE_SERVER.
start_pulse() {
    mkdir -m 700 "$work/pulse-runtime"
    XDG_RUNTIME_DIR="$work/pulse-runtime" pulseaudio -n --daemonize=no --exit-idle-time=-1 --disallow-exit \
        --log-target=file:"$work/pulse.log" \
        -L module-null-sink -L module-native-protocol-unix >/dev/null 2>&1 &
    pulse_pid=$!
    for _ in $(seq 1 50); do
        [[ -S "$work/pulse-runtime/pulse/native" ]] && break
        sleep 0.1
    done
    if [[ ! -S "$work/pulse-runtime/pulse/native" ]]; then
        echo "$bench_name: PulseAudio did not start:" >&2
        cat "$work/pulse.log" >&2 || true
        exit 1
    fi
    export PULSE_SERVER="unix:$work/pulse-runtime/pulse/native"
}

# sndfile-play uses ALSA (device `default`, routed to PulseAudio by 99-pulse.conf) only when
# /proc/asound/cards is readable, else OSS (/dev/dsp), which fails here. On a machine without a
# sound card a tiny LD_PRELOAD shim answers that one access() check, so it takes the ALSA path.
# Sets the array sndfile_play (the command; `env` execs, so its PID is sndfile-play's).
sndfile_play_command() {
    sndfile_play=(sndfile-play)
    [[ -r /proc/asound/cards ]] && return 0
    cat >"$work/asound-cards.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
int access(const char *path, int mode) {
    static int (*real)(const char *, int);
    if (path != 0 && strcmp(path, "/proc/asound/cards") == 0) return 0;
    if (real == 0) real = (int (*)(const char *, int))dlsym(RTLD_NEXT, "access");
    return real(path, mode);
}
EOF
    local compiler
    compiler=$(command -v "${CC:-cc}" || command -v clang || command -v gcc || true)
    if [[ -n "$compiler" ]] && "$compiler" -shared -fPIC -O2 -o "$work/asound-cards.so" "$work/asound-cards.c" -ldl; then
        sndfile_play=(env LD_PRELOAD="$work/asound-cards.so" sndfile-play)
        log "no /proc/asound/cards (no sound card): sndfile-play runs with an LD_PRELOAD shim so it uses ALSA"
    else
        log "no /proc/asound/cards and no C compiler for the shim: sndfile-play will try OSS and fail"
    fi
}

model_name() {
    local model
    model=$(lscpu 2>/dev/null | awk -F': *' '/^Model name/ { print $2; exit }')
    [[ -n "$model" ]] || model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
    echo "${model:-unknown}"
}
