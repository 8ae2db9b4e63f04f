// Loading a C library at run time, for the modules that map one only when it is first needed
// (CCurl, CEBUR128, CFFmpeg, CSoxr): one way to open it and find its functions, and errors that
// name the library and what was missing.

#ifndef REEL_DYNAMIC_LIBRARY_H
#define REEL_DYNAMIC_LIBRARY_H

#include <stddef.h>

/// A function to find: its name in the library and where its address goes.
typedef struct {
    const char *name;
    void **slot;
} reel_library_symbol;

/// `{ "name", &functions.field }` for a table of `reel_library_symbol`s.
#define REEL_SYMBOL(field, symbol_name) { symbol_name, (void **)&(field) }

/// Opens `name` with RTLD_NOW | RTLD_LOCAL (nothing else in the process binds to its symbols; it
/// is never unloaded). NULL when it cannot be loaded, with "cannot load NAME: why" in `error`.
void *reel_library_open(const char *name, char *error, size_t error_size);

/// Finds each of `symbols` in `library` (opened by `reel_library_open`) and stores its address.
/// 0 when all were found; else -1, with "OWNER has no FUNCTION" in `error` (`owner` names the
/// library as the user knows it: "libcurl.so.4", "FFmpeg").
int reel_library_find(void *library, const char *owner, const reel_library_symbol *symbols, size_t count,
                      char *error, size_t error_size);

#endif
