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

/// `reel_library_open` then `reel_library_find` for a library that is its own owner (one file,
/// as libcurl, libebur128 and libsoxr are). 0 when loaded with every symbol found; else -1, with
/// the reason in `error`.
int reel_library_load(const char *name, const reel_library_symbol *symbols, size_t count, char *error,
                      size_t error_size);

/// Hands back to the kernel (MADV_DONTNEED) the resident pages of every loaded object's
/// read-only segments: the text and read-only data of reeld itself and of every library mapped,
/// including those loaded at run time (libcurl's some 40, FFmpeg's some 125). Any thread, at any
/// time; ~0.1 ms.
///
/// Why: the kernel maps up to 64 KB around each page of a file that is touched, so start-up
/// code (the dynamic loader relocating a library, a TLS library's initialisation, FFmpeg's
/// demuxer probes, opening a device, reading the config) leaves megabytes resident that steady
/// work never touches again. Handing them back costs nothing but a fault: a page used again
/// comes back from the page cache at its first touch, the same bytes.
///
/// Safe while other threads run and while another thread loads a library: only segments the
/// dynamic loader maps without write permission are handed back (never a writable segment,
/// never the RELRO part it relocates, nor an object with text relocations), and
/// dl_iterate_phdr lists an object only once its segments are mapped. Nothing is handed back
/// while a debugger is attached (its breakpoints are written into the text).
///
/// Every page a segment is mapped on goes, its last, partly filled one too, unless a written
/// part of the object lies on that page. The release reads an object's program headers (which
/// lie in its first read-only segment) before it hands anything of it back, and nothing of a
/// segment after: one page read after would come back with its 64 KB fault-around window.
void reel_loaded_pages_release(void);

/// `reel_loaded_pages_release`, and the free pages of malloc's heaps (malloc_trim): once what
/// a start-up touched has settled (a stream that has played a few seconds, a stream that ended).
void reel_settled_pages_release(void);

/// Fixes malloc's mmap threshold (a block from this size on is a mapping of its own) and trim
/// threshold (a heap's free top beyond this goes back), which glibc otherwise raises when a large
/// block is freed, and the most heaps (arenas) threads share. Once, at start (reeld's
/// `HeapSettings`). 1 when malloc took all three, else 0.
int reel_heap_settings_set(int mmap_threshold, int trim_threshold, int arenas);

#endif
