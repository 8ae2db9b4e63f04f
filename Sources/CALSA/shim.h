#include <alsa/asoundlib.h>

/* alsa-lib prints its own diagnostics to stderr through a variadic callback, which Swift
   cannot implement; Reel reports errors itself, so the shim installs a silent handler. */
static void reel_alsa_quiet_handler(const char *file, int line, const char *function, int err,
                                    const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

static inline void reel_alsa_silence_errors(void) {
    snd_lib_error_set_handler(reel_alsa_quiet_handler);
}
