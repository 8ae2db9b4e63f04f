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

/// The read-only private mappings of the files a load brought in that hold no page of their own
/// (smaps's `Anonymous: 0`: nothing was written to them, so every page is the file's): the
/// libraries' text and read-only data. Written once while loading, read afterwards.
///
/// Why: the dynamic loader reads and relocates every library a load brings in, and first use
/// runs set-up code (FFmpeg's demuxer probes, a TLS library's initialisation): megabytes of
/// their pages become resident (the kernel maps 64 KB around each page touched) that steady work
/// never touches again. Handing them back (MADV_DONTNEED) costs nothing: a page used again comes
/// back from the page cache at its first touch, the same bytes; relocated data (written, so the
/// process's own) is not touched.
typedef struct {
    struct {
        void *start;
        size_t length;
    } mappings[4096];
    int count;
} reel_file_pages;

/// /proc/self/maps's text (malloc'd; the caller frees it), taken before a load; NULL if it
/// cannot be read.
char *reel_file_pages_maps(void);

/// Finds in `pages` the file mappings not in `before` (`reel_file_pages_maps`'s text from
/// before the load) that hold no page of their own. Once, right after loading.
void reel_file_pages_find(reel_file_pages *pages, const char *before);

/// Hands the resident pages of `pages` back to the kernel (~0.3 ms for ~400 mappings).
void reel_file_pages_release(const reel_file_pages *pages);

#endif
