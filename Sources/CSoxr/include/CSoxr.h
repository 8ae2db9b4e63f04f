// libsoxr, loaded when the first resampler is made rather than when reeld starts: only a pipe
// output whose rate differs from the music's needs it, and a daemon that never resamples does
// not map it (nor libgomp, which it links) or run its start-up.
//
// The types and constants are libsoxr's own (<soxr.h>, Debian's libsoxr-dev). Call
// `reel_soxr_load` first: the other functions may be called only once it has returned NULL.

#ifndef REEL_CSOXR_H
#define REEL_CSOXR_H

#include <soxr.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The soname loaded: libsoxr 0.1's (Debian's libsoxr0).
#define REEL_SOXR_LIBRARY "libsoxr.so.0"

/// Loads libsoxr and finds its functions, once for the process (any thread; later calls return
/// the first one's result). NULL when they are ready, else why not (a static string).
const char *reel_soxr_load(void);

/// True once `reel_soxr_load` has loaded libsoxr; never loads it (for tests).
int reel_soxr_loaded(void);

soxr_io_spec_t reel_soxr_io_spec(soxr_datatype_t itype, soxr_datatype_t otype);
soxr_quality_spec_t reel_soxr_quality_spec(unsigned long recipe, unsigned long flags);
soxr_runtime_spec_t reel_soxr_runtime_spec(unsigned num_threads);
soxr_t reel_soxr_create(double input_rate, double output_rate, unsigned num_channels, soxr_error_t *error,
                        soxr_io_spec_t const *io_spec, soxr_quality_spec_t const *quality_spec,
                        soxr_runtime_spec_t const *runtime_spec);
soxr_error_t reel_soxr_process(soxr_t resampler, soxr_in_t in, size_t ilen, size_t *idone, soxr_out_t out,
                               size_t olen, size_t *odone);
soxr_error_t reel_soxr_clear(soxr_t resampler);
void reel_soxr_delete(soxr_t resampler);

#ifdef __cplusplus
}
#endif

#endif
