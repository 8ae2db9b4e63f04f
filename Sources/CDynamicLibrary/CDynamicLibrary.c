// Loading a C library at run time: see include/CDynamicLibrary.h.

#define _GNU_SOURCE
#include "CDynamicLibrary.h"

#include <dlfcn.h>
#include <link.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

void *reel_library_open(const char *name, char *error, size_t error_size) {
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *detail = dlerror();
        snprintf(error, error_size, "cannot load %s: %s", name, detail != NULL ? detail : "unknown error");
    }
    return library;
}

int reel_library_find(void *library, const char *owner, const reel_library_symbol *symbols, size_t count,
                      char *error, size_t error_size) {
    for (size_t index = 0; index < count; index++) {
        *symbols[index].slot = dlsym(library, symbols[index].name);
        if (*symbols[index].slot == NULL) {
            snprintf(error, error_size, "%s has no %s", owner, symbols[index].name);
            return -1;
        }
    }
    return 0;
}

int reel_library_load(const char *name, const reel_library_symbol *symbols, size_t count, char *error,
                      size_t error_size) {
    void *library = reel_library_open(name, error, error_size);
    if (library == NULL) return -1;
    return reel_library_find(library, name, symbols, count, error, error_size);
}

// MARK: Pages of the code that is loaded

/// Whether `info` is the kernel's vDSO (not a file: nothing to hand back).
static int is_vdso(const struct dl_phdr_info *info) {
    uintptr_t vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
    return vdso != 0 && (uintptr_t)info->dlpi_phdr >= vdso && (uintptr_t)info->dlpi_phdr - vdso < 4096;
}

/// Whether the object's dynamic section says its text is relocated in place (DT_TEXTREL): then
/// its read-only segments hold written pages, which must not be handed back. `segments` is a copy
/// of its program headers.
static int has_text_relocations(const struct dl_phdr_info *info, const ElfW(Phdr) *segments, int count) {
    for (int i = 0; i < count; i++) {
        if (segments[i].p_type != PT_DYNAMIC) continue;
        for (const ElfW(Dyn) *entry = (const ElfW(Dyn) *)(info->dlpi_addr + segments[i].p_vaddr);
             entry->d_tag != DT_NULL; entry++) {
            if (entry->d_tag == DT_TEXTREL) return 1;
            if (entry->d_tag == DT_FLAGS && (entry->d_un.d_val & DF_TEXTREL) != 0) return 1;
        }
    }
    return 0;
}

/// The most program headers an object's release reads (a linked object has about a dozen).
enum { most_segments = 64 };

static int release_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size, (void)data;
    if (is_vdso(info) || info->dlpi_phnum > most_segments) return 0;
    // The program headers lie in the object's first read-only segment, which is handed back
    // below: they are copied first, and nothing of that segment is read after its release. (Read
    // after it, one header's page faulted back in with the kernel's fault-around, up to 64 KB of
    // every object loaded: 4.9 MB with FFmpeg's libraries.)
    ElfW(Phdr) segments[most_segments];
    int count = info->dlpi_phnum;
    memcpy(segments, info->dlpi_phdr, (size_t)count * sizeof segments[0]);
    if (has_text_relocations(info, segments, count)) return 0;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (int i = 0; i < count; i++) {
        const ElfW(Phdr) *segment = &segments[i];
        if (segment->p_type != PT_LOAD || (segment->p_flags & PF_W) != 0) continue;
        // Every page the segment is mapped on (its last, partly filled page is the file's bytes
        // after it, mapped read-only all the same), less a page that a written part of the
        // object (a writable segment, the RELRO part the loader relocates) also lies on.
        uintptr_t first = info->dlpi_addr + segment->p_vaddr;
        uintptr_t last = first + segment->p_memsz;
        uintptr_t start = first & ~(page - 1);
        uintptr_t end = (last + page - 1) & ~(page - 1);
        // A segment longer in memory than in the file: the loader zero-fills from the file's
        // end on (the page it ends in is written), and handing that back would bring back the
        // file's bytes in place of the zeros. Only the pages wholly of the file go.
        if (segment->p_memsz > segment->p_filesz) {
            uintptr_t zeroed = (first + segment->p_filesz) & ~(page - 1);
            if (zeroed < end) end = zeroed;
        }
        for (int j = 0; j < count && start < end; j++) {
            const ElfW(Phdr) *written = &segments[j];
            int writable = written->p_type == PT_LOAD && (written->p_flags & PF_W) != 0;
            if (!writable && written->p_type != PT_GNU_RELRO) continue;
            uintptr_t written_start = (info->dlpi_addr + written->p_vaddr) & ~(page - 1);
            uintptr_t written_end = (info->dlpi_addr + written->p_vaddr + written->p_memsz + page - 1) & ~(page - 1);
            if (written_end <= start || end <= written_start) continue;
            if (written_start <= start && end <= written_end) {
                start = end; // all of it is written (a RELRO segment of its own)
            } else if (written_start <= start) {
                start = written_end;
            } else {
                end = written_start;
            }
        }
        if (end > start) madvise((void *)start, end - start, MADV_DONTNEED);
    }
    return 0;
}

/// Whether a debugger is attached (/proc/self/status's TracerPid): its breakpoints are written
/// into the text, and handing those pages back would drop them.
static int traced(void) {
    FILE *status = fopen("/proc/self/status", "re");
    if (status == NULL) return 0;
    char line[256];
    long tracer = 0;
    while (fgets(line, sizeof line, status) != NULL) {
        if (strncmp(line, "TracerPid:", 10) == 0) {
            tracer = strtol(line + 10, NULL, 10);
            break;
        }
    }
    fclose(status);
    return tracer != 0;
}

void reel_loaded_pages_release(void) {
    if (traced()) return;
    dl_iterate_phdr(release_object, NULL);
}

void reel_settled_pages_release(void) {
    reel_loaded_pages_release();
    malloc_trim(0);
}

int reel_heap_settings_set(int mmap_threshold, int trim_threshold, int arenas) {
    int taken = mallopt(M_TRIM_THRESHOLD, trim_threshold);
    taken &= mallopt(M_MMAP_THRESHOLD, mmap_threshold);
    taken &= mallopt(M_ARENA_MAX, arenas);
    return taken;
}
