/* dlopen, dlsym, dlclose and dlerror for the C test hosts, on Windows through LoadLibraryEx (UTF-8 paths), so one
 * host source builds for Linux and, with zig, for Windows (run under Wine). */
#ifndef MECHFMU_HOST_DL_H
#define MECHFMU_HOST_DL_H
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <psapi.h>
#include <shellapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RTLD_NOW 0
#define RTLD_LOCAL 0

static char dl_error_text[512];

static inline void *dlopen(const char *path, int mode) {
    (void)mode;
    wchar_t wide[4096];
    if (!MultiByteToWideChar(CP_UTF8, 0, path, -1, wide, 4096)) return NULL;
    HMODULE module = LoadLibraryExW(wide, NULL, LOAD_WITH_ALTERED_SEARCH_PATH);
    if (!module) snprintf(dl_error_text, sizeof dl_error_text, "LoadLibraryEx(%s) failed: error %lu", path,
                          (unsigned long)GetLastError());
    return module;
}

static inline void *dlsym(void *library, const char *name) {
    FARPROC address = GetProcAddress((HMODULE)library, name);
    void *symbol;
    memcpy(&symbol, &address, sizeof symbol);
    return symbol;
}

static inline int dlclose(void *library) { return FreeLibrary((HMODULE)library) ? 0 : -1; }
static inline const char *dlerror(void) { return dl_error_text; }

/* How many Python runtimes (python3X.dll) the process has loaded. */
static inline int libpython_mappings(void) {
    int count = 0;
    for (int minor = 0; minor < 100; ++minor) {
        char name[32];
        snprintf(name, sizeof name, "python3%d.dll", minor);
        count += GetModuleHandleA(name) != NULL;
    }
    return count;
}

/* main's arguments as UTF-8 (Windows hands them over in the ANSI code page, which loses what it cannot encode). */
static inline void utf8_arguments(int *argc, char ***argv) {
    wchar_t **wide = CommandLineToArgvW(GetCommandLineW(), argc);
    char **utf8 = calloc((size_t)*argc + 1, sizeof *utf8);
    for (int i = 0; wide && utf8 && i < *argc; ++i) {
        int n = WideCharToMultiByte(CP_UTF8, 0, wide[i], -1, NULL, 0, NULL, NULL);
        utf8[i] = malloc((size_t)n);
        if (utf8[i]) WideCharToMultiByte(CP_UTF8, 0, wide[i], -1, utf8[i], n, NULL, NULL);
    }
    if (wide && utf8) *argv = utf8;
}

/* Resident set size in kB. */
static inline long rss_kb(void) {
    PROCESS_MEMORY_COUNTERS counters;
    return K32GetProcessMemoryInfo(GetCurrentProcess(), &counters, sizeof counters)
               ? (long)(counters.WorkingSetSize / 1024) : 0;
}
#else
#include <dlfcn.h>
#include <stdio.h>
#define utf8_arguments(argc, argv) ((void)(argc), (void)(argv))
#endif

/* The FMU binary at `path`, or NULL after printing why. */
static inline void *host_open(const char *path) {
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library) fprintf(stderr, "%s\n", dlerror());
    return library;
}

/* fmi3<name> from `library` into the function pointer `name`, or main returns 2 after printing which is missing (an
 * X-macro's step: FUNCTIONS(HOST_LOAD_FMI3)). */
#define HOST_LOAD_FMI3(name)                                                                                      \
    if (!(*(void **)&name = dlsym(library, "fmi3" #name))) {                                                     \
        fprintf(stderr, "no fmi3%s\n", #name);                                                                   \
        return 2;                                                                                                 \
    }
#endif
