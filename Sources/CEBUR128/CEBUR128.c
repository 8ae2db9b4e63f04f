// libebur128 through dlopen: see include/CEBUR128.h.

#include "CEBUR128.h"

#include <dlfcn.h>
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
    // RTLD_LOCAL: nothing else in the process binds to its symbols; never unloaded.
    void *library = dlopen(REEL_EBUR128_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *detail = dlerror();
        snprintf(load_error_text, sizeof load_error_text, "cannot load %s: %s", REEL_EBUR128_LIBRARY,
                 detail != NULL ? detail : "unknown error");
        load_error = load_error_text;
        return;
    }
#define FIND(field, name)                                                                          \
    do {                                                                                           \
        *(void **)&functions.field = dlsym(library, name);                                         \
        if (functions.field == NULL) {                                                             \
            snprintf(load_error_text, sizeof load_error_text, "%s has no %s", REEL_EBUR128_LIBRARY, \
                     name);                                                                        \
            load_error = load_error_text;                                                          \
            return;                                                                                \
        }                                                                                          \
    } while (0)
    FIND(init, "ebur128_init");
    FIND(destroy, "ebur128_destroy");
    FIND(add_frames_short, "ebur128_add_frames_short");
    FIND(loudness_global, "ebur128_loudness_global");
    FIND(sample_peak, "ebur128_sample_peak");
#undef FIND
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
