// libsoxr through dlopen: see include/CSoxr.h.

#include "CSoxr.h"

#include "CDynamicLibrary.h"

#include <pthread.h>
#include <stdio.h>

static struct {
    __typeof__(soxr_io_spec) *io_spec;
    __typeof__(soxr_quality_spec) *quality_spec;
    __typeof__(soxr_runtime_spec) *runtime_spec;
    __typeof__(soxr_create) *create;
    __typeof__(soxr_process) *process;
    __typeof__(soxr_clear) *clear;
    __typeof__(soxr_delete) *delete_;
} functions;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *load_error;
static char load_error_text[512];
static int loaded;

static void load(void) {
    const reel_library_symbol symbols[] = {
        REEL_SYMBOL(functions.io_spec, "soxr_io_spec"),
        REEL_SYMBOL(functions.quality_spec, "soxr_quality_spec"),
        REEL_SYMBOL(functions.runtime_spec, "soxr_runtime_spec"),
        REEL_SYMBOL(functions.create, "soxr_create"),
        REEL_SYMBOL(functions.process, "soxr_process"),
        REEL_SYMBOL(functions.clear, "soxr_clear"),
        REEL_SYMBOL(functions.delete_, "soxr_delete"),
    };
    if (reel_library_load(REEL_SOXR_LIBRARY, symbols, sizeof symbols / sizeof *symbols, load_error_text,
                          sizeof load_error_text) != 0) {
        load_error = load_error_text;
        return;
    }
    __atomic_store_n(&loaded, 1, __ATOMIC_RELEASE);
}

const char *reel_soxr_load(void) {
    pthread_once(&once, load);
    return load_error;
}

int reel_soxr_loaded(void) {
    return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE);
}

soxr_io_spec_t reel_soxr_io_spec(soxr_datatype_t itype, soxr_datatype_t otype) {
    return functions.io_spec(itype, otype);
}

soxr_quality_spec_t reel_soxr_quality_spec(unsigned long recipe, unsigned long flags) {
    return functions.quality_spec(recipe, flags);
}

soxr_runtime_spec_t reel_soxr_runtime_spec(unsigned num_threads) {
    return functions.runtime_spec(num_threads);
}

soxr_t reel_soxr_create(double input_rate, double output_rate, unsigned num_channels, soxr_error_t *error,
                        soxr_io_spec_t const *io_spec, soxr_quality_spec_t const *quality_spec,
                        soxr_runtime_spec_t const *runtime_spec) {
    return functions.create(input_rate, output_rate, num_channels, error, io_spec, quality_spec, runtime_spec);
}

soxr_error_t reel_soxr_process(soxr_t resampler, soxr_in_t in, size_t ilen, size_t *idone, soxr_out_t out,
                               size_t olen, size_t *odone) {
    return functions.process(resampler, in, ilen, idone, out, olen, odone);
}

soxr_error_t reel_soxr_clear(soxr_t resampler) {
    return functions.clear(resampler);
}

void reel_soxr_delete(soxr_t resampler) {
    functions.delete_(resampler);
}
