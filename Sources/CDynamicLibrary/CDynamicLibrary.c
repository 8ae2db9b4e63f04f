// Loading a C library at run time: see include/CDynamicLibrary.h.

#include "CDynamicLibrary.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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

// MARK: Pages of what was loaded

/// The whole of a /proc file (no size to stat), NUL-terminated; NULL if it cannot be read.
static char *read_proc_file(const char *path) {
    FILE *file = fopen(path, "re");
    if (file == NULL) return NULL;
    size_t size = 0, capacity = 1 << 16;
    char *text = malloc(capacity);
    while (text != NULL) {
        size += fread(text + size, 1, capacity - size - 1, file);
        if (size < capacity - 1) break;
        char *larger = realloc(text, capacity * 2);
        if (larger == NULL) {
            free(text);
            text = NULL;
            break;
        }
        text = larger;
        capacity *= 2;
    }
    fclose(file);
    if (text != NULL) text[size] = '\0';
    return text;
}

/// Whether `path` is the file of one of the mappings in `maps` (/proc/self/maps's text).
static int mapped_in(const char *maps, const char *path) {
    size_t length = strlen(path);
    for (const char *at = strstr(maps, path); at != NULL; at = strstr(at + 1, path)) {
        if (at > maps && at[-1] == ' ' && at[length] == '\n') return 1;
    }
    return 0;
}


void reel_file_pages_find(reel_file_pages *pages, const char *before) {
    FILE *smaps = fopen("/proc/self/smaps", "re");
    if (smaps == NULL) return;
    char line[4096];
    unsigned long start = 0, end = 0;
    int candidate = 0;
    while (fgets(line, sizeof line, smaps) != NULL) {
        unsigned long first, last;
        char permissions[8];
        int offset = 0;
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &first, &last, permissions, &offset) == 3 && offset > 0) {
            // A mapping's first line: its range, permissions, offset, device, inode, path.
            char *path = line + offset;
            path[strcspn(path, "\n")] = '\0';
            start = first;
            end = last;
            candidate = path[0] == '/' && permissions[1] != 'w' && permissions[3] == 'p' &&
                        strstr(path, " (deleted)") == NULL && !mapped_in(before, path);
        } else if (candidate && strncmp(line, "Anonymous:", 10) == 0) {
            int count = pages->count;
            if (strtol(line + 10, NULL, 10) == 0 && count < (int)(sizeof pages->mappings / sizeof pages->mappings[0])) {
                pages->mappings[count].start = (void *)start;
                pages->mappings[count].length = end - start;
                pages->count = count + 1;
            }
            candidate = 0;
        }
    }
    fclose(smaps);
}

void reel_file_pages_release(const reel_file_pages *pages) {
    for (int i = 0; i < pages->count; i++) madvise(pages->mappings[i].start, pages->mappings[i].length, MADV_DONTNEED);
}

char *reel_file_pages_maps(void) { return read_proc_file("/proc/self/maps"); }
