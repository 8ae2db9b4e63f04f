// libebur128 (EBU R128 loudness), loaded when the first take is measured rather than when reeld
// starts: a daemon that never records does not map it.
//
// The types and constants are libebur128's own (<ebur128.h>, Debian's libebur128-dev). Call
// `reel_ebur128_load` first: the other functions may be called only once it has returned NULL.

#ifndef REEL_CEBUR128_H
#define REEL_CEBUR128_H

#include <ebur128.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The soname loaded: libebur128 1.x's (Debian's libebur128-1).
#define REEL_EBUR128_LIBRARY "libebur128.so.1"

/// Loads libebur128 and finds its functions, once for the process (any thread; later calls
/// return the first one's result). NULL when they are ready, else why not (a static string).
const char *reel_ebur128_load(void);

ebur128_state *reel_ebur128_init(unsigned int channels, unsigned long samplerate, int mode);
void reel_ebur128_destroy(ebur128_state **state);
int reel_ebur128_add_frames_short(ebur128_state *state, const short *source, size_t frames);
int reel_ebur128_loudness_global(ebur128_state *state, double *out);
int reel_ebur128_sample_peak(ebur128_state *state, unsigned int channel, double *out);

#ifdef __cplusplus
}
#endif

#endif
