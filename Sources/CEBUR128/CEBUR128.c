// libebur128 through dlopen: see include/CEBUR128.h.

#include "CEBUR128.h"

#include "CDynamicLibrary.h"

#include <pthread.h>
#include <stdio.h>

static struct {
    __typeof__(ebur128_init) *init;
    __typeof__(ebur128_destroy) *destroy;
    __typeof__(ebur128_add_frames_short) *add_frames_short;
    __typeof__(ebur128_loudness_global) *loudness_global;
    __typeof__(ebur128_sample_peak) *sample_peak;
} functions;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *load_error;
static char load_error_text[512];

static void load(void) {
    const reel_library_symbol symbols[] = {
        REEL_SYMBOL(functions.init, "ebur128_init"),
        REEL_SYMBOL(functions.destroy, "ebur128_destroy"),
        REEL_SYMBOL(functions.add_frames_short, "ebur128_add_frames_short"),
        REEL_SYMBOL(functions.loudness_global, "ebur128_loudness_global"),
        REEL_SYMBOL(functions.sample_peak, "ebur128_sample_peak"),
    };
    if (reel_library_load(REEL_EBUR128_LIBRARY, symbols, sizeof symbols / sizeof *symbols, load_error_text,
                          sizeof load_error_text) != 0) {
        load_error = load_error_text;
    }
}

const char *reel_ebur128_load(void) {
    pthread_once(&once, load);
    return load_error;
}

ebur128_state *reel_ebur128_init(unsigned int channels, unsigned long samplerate, int mode) {
    return functions.init(channels, samplerate, mode);
}

void reel_ebur128_destroy(ebur128_state **state) { functions.destroy(state); }

int reel_ebur128_add_frames_short(ebur128_state *state, const short *source, size_t frames) {
    return functions.add_frames_short(state, source, frames);
}

int reel_ebur128_loudness_global(ebur128_state *state, double *out) { return functions.loudness_global(state, out); }

int reel_ebur128_sample_peak(ebur128_state *state, unsigned int channel, double *out) {
    return functions.sample_peak(state, channel, out);
}
