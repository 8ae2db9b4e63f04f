// Loading a C library at run time: see include/CDynamicLibrary.h.

#include "CDynamicLibrary.h"

#include <dlfcn.h>
#include <stdio.h>

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
