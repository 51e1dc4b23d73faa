/*
 * The operating system under the FMU binary: once and locks, this binary's own file, file URIs, UTF-8 paths, and
 * finding the Python runtime on the target machine.
 *
 * The Python runtime, in this order (the first that loads is used, for the life of the process):
 *   1. the one already in the process, if its symbols are visible: a Python host (fmpy, a Python whose
 *      interpreter is linked statically) is never given a second interpreter; one of another version runs the
 *      FMU with a warning (the FMU's code is the standard library's and its own);
 *   2. a library of the FMU's version that the process has loaded locally (POSIX: promoted to the global scope);
 *   3. the library named in the environment variable MECHFMU_PYTHON (the file, or the folder that holds it);
 *   4. where this platform's Python installs put it:
 *      Linux: the build machine's libpython (built on this machine), then the soname through the library search
 *      path (LD_LIBRARY_PATH, ldconfig); macOS: the python.org framework, Homebrew's (Apple silicon and Intel),
 *      MacPorts', pyenv's (built with --enable-shared), then libpython3.X.dylib through dyld's search path;
 *      Windows: python3X.dll beside the host's executable, in each folder of PATH, in the installs registered
 *      under Software\Python\PythonCore\3.X\InstallPath (per user, then per machine), then the system's DLL search.
 * If none loads, the error lists every place tried, and on Windows the other Python versions found there.
 */
#ifndef _WIN32
#define _GNU_SOURCE /* RTLD_DEFAULT, RTLD_NOLOAD, dladdr */
#endif
#include "platform.h"

#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <malloc.h> /* _aligned_malloc */
#endif

#ifndef _WIN32
#include <dlfcn.h>
#include <glob.h>
#include <sys/stat.h>
#ifndef MECHFMU_LIBPYTHON_PATH
#define MECHFMU_LIBPYTHON_PATH ""
#endif
#if !defined(MECHFMU_LIBPYTHON_SONAME) && !defined(MECHFMU_NATIVE)
#error "MECHFMU_LIBPYTHON_SONAME must be defined"
#endif
#endif

#define PATH_SIZE 4096

#ifndef MECHFMU_NATIVE
/* What was tried, for the error: "; "-separated, cut (with "...") when full. */
typedef struct {
    char *text;
    size_t size;
} Tried;

static void tried_add(Tried *tried, const char *format, ...) PRINTF_LIKE(2, 3);
static void tried_add(Tried *tried, const char *format, ...) {
    size_t used = strlen(tried->text);
    if (used + 4 >= tried->size) return;
    if (used) used += (size_t)snprintf(tried->text + used, tried->size - used, "; ");
    va_list args;
    va_start(args, format);
    int n = vsnprintf(tried->text + used, tried->size - used, format, args);
    va_end(args);
    if (n < 0 || used + (size_t)n >= tried->size) snprintf(tried->text + tried->size - 4, 4, "...");
}
#endif

char *platform_format(const char *format, va_list args) {
    va_list again;
    va_copy(again, args);
    int n = vsnprintf(NULL, 0, format, args);
    char *text = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (text) vsnprintf(text, (size_t)n + 1, format, again);
    va_end(again);
    return text;
}

char *platform_strndup(const char *text, size_t n) {
    size_t length = 0;
    while (length < n && text[length]) ++length;
    char *copy = malloc(length + 1);
    if (!copy) return NULL;
    memcpy(copy, text, length);
    copy[length] = '\0';
    return copy;
}

/* --- file URIs ------------------------------------------------------------------------------- */

static int hex_digit(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int is_localhost(const char *host, size_t n) {
    static const char name[] = "localhost";
    if (n != sizeof name - 1) return 0;
    for (size_t i = 0; i < n; ++i)
        if ((host[i] | 0x20) != name[i]) return 0;
    return 1;
}

#ifdef _WIN32
static int is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
#endif

char *platform_resource_path(const char *uri, char *why, size_t size) {
    if (strncmp(uri, "file:", 5) != 0) {
        snprintf(why, size, "fmuResourceLocation '%.300s' is not a file URI (file:///path/to/the/unpacked/FMU/"
                 "resources)", uri);
        return NULL;
    }
    const char *path = uri + 5, *host = "";
    size_t host_length = 0;
    if (strncmp(path, "//", 2) == 0) {
        host = path + 2;
        host_length = strcspn(host, "/");
        path = host + host_length;
        if (is_localhost(host, host_length)) host_length = 0;
    }
#ifdef _WIN32
    if (host_length == 2 && is_letter(host[0]) && (host[1] == ':' || host[1] == '|')) { /* file://C:/x */
        path = host;
        host_length = 0;
    }
    if (path[0] == '/' && is_letter(path[1]) && (path[2] == ':' || path[2] == '|')) ++path; /* /C:/x -> C:/x */
#else
    if (host_length) {
        snprintf(why, size, "fmuResourceLocation '%.300s' names the host '%.*s': only a local folder can be read "
                 "(file:///path or file://localhost/path)", uri, (int)(host_length > 200 ? 200 : host_length), host);
        return NULL;
    }
    if (path[0] != '/') {
        snprintf(why, size, "fmuResourceLocation '%.300s' holds no absolute path (file:///path/to/resources)", uri);
        return NULL;
    }
#endif
    char *decoded = malloc(2 + host_length + strlen(path) + 1), *out = decoded;
    if (!decoded) {
        snprintf(why, size, "out of memory");
        return NULL;
    }
    if (host_length) { /* Windows: a UNC share */
        *out++ = '/';
        *out++ = '/';
        memcpy(out, host, host_length);
        out += host_length;
    }
    for (const char *p = path; *p; ++p) {
        if (*p != '%') {
            *out++ = *p;
            continue;
        }
        int high = hex_digit(p[1]), low = high < 0 ? -1 : hex_digit(p[2]);
        if (low < 0 || (high == 0 && low == 0)) {
            snprintf(why, size, "fmuResourceLocation '%.300s' holds %s at '%.3s'", uri,
                     low < 0 ? "a '%' not followed by two hex digits" : "an encoded NUL (%00), which would cut the "
                     "path short", p);
            free(decoded);
            return NULL;
        }
        *out++ = (char)(high * 16 + low);
        p += 2;
    }
    *out = '\0';
#ifdef _WIN32
    if (!host_length && is_letter(decoded[0]) && decoded[1] == '|') decoded[1] = ':'; /* the old C| */
    for (out = decoded; *out; ++out)
        if (*out == '/') *out = '\\';
    if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, decoded, -1, NULL, 0) == 0) {
        snprintf(why, size, "fmuResourceLocation '%.300s' is not UTF-8 once percent-decoded", uri);
        free(decoded);
        return NULL;
    }
#endif
    return decoded;
}

#ifdef _WIN32
/* --- Windows ----------------------------------------------------------------------------------- */

typedef struct {
    void (*function)(void);
} OnceCall;

static BOOL CALLBACK run_once(PINIT_ONCE once, PVOID parameter, PVOID *context) {
    (void)once, (void)context;
    ((OnceCall *)parameter)->function();
    return TRUE;
}

void platform_once(platform_once_t *once, void (*function)(void)) {
    OnceCall call = {function};
    InitOnceExecuteOnce(once, run_once, &call, NULL);
}
void platform_lock(platform_mutex_t *mutex) { AcquireSRWLockExclusive(mutex); }
void platform_unlock(platform_mutex_t *mutex) { ReleaseSRWLockExclusive(mutex); }

/* UTF-8 as a new UTF-16 string (malloc'd), NULL if invalid or out of memory. */
static wchar_t *wide(const char *text) {
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, text, -1, NULL, 0);
    wchar_t *converted = n > 0 ? malloc((size_t)n * sizeof *converted) : NULL;
    if (converted) MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, text, -1, converted, n);
    return converted;
}

static int narrow(const wchar_t *text, char *out, size_t size) {
    return WideCharToMultiByte(CP_UTF8, 0, text, -1, out, (int)size, NULL, NULL) > 0 ? 0 : -1;
}

FILE *platform_fopen(const char *path, const char *mode) {
    wchar_t *wide_path = wide(path), *wide_mode = wide(mode);
    FILE *file = wide_path && wide_mode ? _wfopen(wide_path, wide_mode) : NULL;
    free(wide_path);
    free(wide_mode);
    return file;
}

static const char anchor = 0; /* an address inside this binary */

int platform_own_path(char *path, size_t size) {
    HMODULE module = NULL;
    wchar_t name[PATH_SIZE];
    if (!GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                            (LPCWSTR)&anchor, &module))
        return -1;
    DWORD n = GetModuleFileNameW(module, name, PATH_SIZE);
    if (n == 0 || n >= PATH_SIZE) return -1;
    return narrow(name, path, size);
}

void *platform_hold_own_library(void) {
    HMODULE module = NULL;
    return GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS, (LPCWSTR)&anchor, &module) ? module : NULL;
}

void platform_release_library(void *handle) { FreeLibrary((HMODULE)handle); }

#ifndef MECHFMU_NATIVE /* finding the Python runtime: a native FMU has none to find */
static HMODULE python_module;

void *platform_python_symbol(const char *name) {
    FARPROC address = GetProcAddress(python_module, name);
    void *symbol;
    memcpy(&symbol, &address, sizeof symbol);
    return symbol;
}

static void system_message(DWORD code, char *out, size_t size) {
    wchar_t text[512];
    if (!FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, code, 0, text, 512, NULL)
        || narrow(text, out, size) != 0)
        snprintf(out, size, "error %lu", (unsigned long)code);
    out[strcspn(out, "\r\n")] = '\0';
}

/* The other python3X.dll files in `folder` (not the stable-ABI python3.dll), added to `others`. */
static void other_versions(const wchar_t *folder, const wchar_t *dll, Tried *others) {
    wchar_t pattern[PATH_SIZE];
    _snwprintf(pattern, PATH_SIZE, L"%ls\\python3*.dll", folder);
    WIN32_FIND_DATAW found;
    HANDLE search = FindFirstFileW(pattern, &found);
    if (search == INVALID_HANDLE_VALUE) return;
    do {
        if (_wcsicmp(found.cFileName, L"python3.dll") && _wcsicmp(found.cFileName, dll)) {
            char name[MAX_PATH], where[PATH_SIZE];
            if (narrow(found.cFileName, name, sizeof name) == 0 && narrow(folder, where, sizeof where) == 0)
                tried_add(others, "%s in %s", name, where);
        }
    } while (FindNextFileW(search, &found));
    FindClose(search);
}

/* Load `dll` from `folder` (with its own dependencies, e.g. vcruntime140.dll, from there); what happened goes to
 * `tried`. */
static int load_from(const wchar_t *folder, const wchar_t *dll, Tried *tried, Tried *others) {
    wchar_t path[PATH_SIZE];
    char shown[PATH_SIZE];
    size_t n = wcslen(folder);
    while (n && (folder[n - 1] == L'\\' || folder[n - 1] == L'/')) --n;
    if (!n) return -1;
    _snwprintf(path, PATH_SIZE, L"%.*ls\\%ls", (int)n, folder, dll);
    path[PATH_SIZE - 1] = 0;
    if (narrow(path, shown, sizeof shown) != 0) snprintf(shown, sizeof shown, "(a path that is not UTF-16)");
    if (GetFileAttributesW(path) == INVALID_FILE_ATTRIBUTES) {
        tried_add(tried, "%s (not there)", shown);
        wchar_t trimmed[PATH_SIZE];
        _snwprintf(trimmed, PATH_SIZE, L"%.*ls", (int)n, folder);
        trimmed[PATH_SIZE - 1] = 0;
        other_versions(trimmed, dll, others);
        return -1;
    }
    python_module = LoadLibraryExW(path, NULL, LOAD_WITH_ALTERED_SEARCH_PATH);
    if (python_module) return 0;
    char reason[512];
    system_message(GetLastError(), reason, sizeof reason);
    tried_add(tried, "%s (%s)", shown, reason);
    return -1;
}

/* MECHFMU_PYTHON: the DLL itself, or its folder. */
static int load_named(const wchar_t *dll, Tried *tried, Tried *others) {
    wchar_t named[PATH_SIZE];
    DWORD n = GetEnvironmentVariableW(L"MECHFMU_PYTHON", named, PATH_SIZE);
    if (n == 0 || n >= PATH_SIZE) return -1;
    DWORD attributes = GetFileAttributesW(named);
    if (attributes != INVALID_FILE_ATTRIBUTES && !(attributes & FILE_ATTRIBUTE_DIRECTORY)) {
        python_module = LoadLibraryExW(named, NULL, LOAD_WITH_ALTERED_SEARCH_PATH);
        if (python_module) return 0;
        char shown[PATH_SIZE], reason[512];
        system_message(GetLastError(), reason, sizeof reason);
        if (narrow(named, shown, sizeof shown) != 0) shown[0] = '\0';
        tried_add(tried, "MECHFMU_PYTHON=%s (%s)", shown, reason);
        return -1;
    }
    return load_from(named, dll, tried, others);
}

static int load_from_path(const wchar_t *dll, Tried *tried, Tried *others) {
    DWORD n = GetEnvironmentVariableW(L"PATH", NULL, 0);
    wchar_t *path = n ? malloc(n * sizeof *path) : NULL;
    if (!path) return -1;
    GetEnvironmentVariableW(L"PATH", path, n);
    int loaded = -1;
    for (wchar_t *folder = path, *end; loaded != 0 && folder && *folder; folder = end ? end + 1 : NULL) {
        end = wcschr(folder, L';');
        if (end) *end = 0;
        if (*folder == L'"') { /* a quoted entry */
            ++folder;
            wchar_t *quote = wcschr(folder, L'"');
            if (quote) *quote = 0;
        }
        if (*folder) loaded = load_from(folder, dll, tried, others);
    }
    free(path);
    return loaded;
}

static int load_registered(const char *version, const wchar_t *dll, Tried *tried, Tried *others) {
    wchar_t key[128], folder[PATH_SIZE];
    _snwprintf(key, 128, L"Software\\Python\\PythonCore\\%hs\\InstallPath", version);
    key[127] = 0;
    HKEY roots[] = {HKEY_CURRENT_USER, HKEY_LOCAL_MACHINE};
    const char *names[] = {"HKEY_CURRENT_USER", "HKEY_LOCAL_MACHINE"};
    for (int i = 0; i < 2; ++i) {
        DWORD size = sizeof folder;
        if (RegGetValueW(roots[i], key, NULL, RRF_RT_REG_SZ, NULL, folder, &size) != ERROR_SUCCESS) {
            tried_add(tried, "registry %s\\Software\\Python\\PythonCore\\%s\\InstallPath (no such key)", names[i],
                      version);
            continue;
        }
        if (load_from(folder, dll, tried, others) == 0) return 0;
    }
    return -1;
}

int platform_load_python(const char *version, char *error, size_t error_size, char *note, size_t note_size) {
    char digits[16] = "";
    for (const char *p = version; *p && strlen(digits) < sizeof digits - 1; ++p)
        if (*p != '.') digits[strlen(digits)] = *p;
    wchar_t dll[32];
    _snwprintf(dll, 32, L"python%hs.dll", digits);
    dll[31] = 0;
    if ((python_module = GetModuleHandleW(dll))) return 0; /* a Python host of this version */
    for (int minor = 0; minor < 100; ++minor) {            /* a Python host of another version */
        wchar_t other[32];
        _snwprintf(other, 32, L"python3%d.dll", minor);
        other[31] = 0;
        if ((python_module = GetModuleHandleW(other))) {
            snprintf(note, note_size, "this FMU was built for Python %s; the host process runs Python 3.%d (it runs "
                     "if that Python can execute the FMU's standard-library-only code)", version, minor);
            return 0;
        }
    }
    char tried_text[8192] = "", others_text[2048] = "";
    Tried tried = {tried_text, sizeof tried_text}, others = {others_text, sizeof others_text};
    wchar_t executable[PATH_SIZE];
    DWORD n = GetModuleFileNameW(NULL, executable, PATH_SIZE);
    wchar_t *slash = n && n < PATH_SIZE ? wcsrchr(executable, L'\\') : NULL;
    if (slash) *slash = 0;
    if (load_named(dll, &tried, &others) == 0 || (slash && load_from(executable, dll, &tried, &others) == 0)
        || load_from_path(dll, &tried, &others) == 0 || load_registered(version, dll, &tried, &others) == 0)
        return 0;
    if ((python_module = LoadLibraryW(dll))) return 0;
    char reason[512];
    system_message(GetLastError(), reason, sizeof reason);
    tried_add(&tried, "python%s.dll through the system's DLL search (%s)", digits, reason);
    snprintf(error, error_size,
             "no Python %s runtime: this FMU runs its model in Python %s (64-bit) and needs python%s.dll. Install "
             "Python %s from python.org (found through the registry), or unpack its Windows embeddable package and "
             "name its folder in the environment variable MECHFMU_PYTHON or on PATH.%s%s Tried: %s",
             version, version, digits, version, others_text[0] ? " Found only another version: " : "", others_text,
             tried_text);
    return -1;
}

#endif
#else
/* --- POSIX: Linux, macOS ---------------------------------------------------------------------- */

void platform_once(platform_once_t *once, void (*function)(void)) { pthread_once(once, function); }
void platform_lock(platform_mutex_t *mutex) { pthread_mutex_lock(mutex); }
void platform_unlock(platform_mutex_t *mutex) { pthread_mutex_unlock(mutex); }

FILE *platform_fopen(const char *path, const char *mode) { return fopen(path, mode); }

int platform_own_path(char *path, size_t size) {
    Dl_info info;
    if (!dladdr((void *)&platform_own_path, &info) || !info.dli_fname) return -1;
    return snprintf(path, size, "%s", info.dli_fname) < (int)size ? 0 : -1;
}

void *platform_hold_own_library(void) {
    char path[PATH_SIZE];
    return platform_own_path(path, sizeof path) == 0 ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
}

void platform_release_library(void *handle) { dlclose(handle); }

#ifndef MECHFMU_NATIVE /* finding the Python runtime: a native FMU has none to find */
void *platform_python_symbol(const char *name) { return dlsym(RTLD_DEFAULT, name); }

static int version_matches(const char *running, const char *version) {
    size_t n = strlen(version);
    return strncmp(running, version, n) == 0 && (running[n] < '0' || running[n] > '9');
}

/* `pattern` with every "{v}" replaced by `version` and a leading "~" by $HOME; "" if it does not fit. */
static void expand(const char *pattern, const char *version, char *out, size_t size) {
    size_t used = 0;
    const char *home = getenv("HOME");
    if (pattern[0] == '~') {
        if (!home) {
            out[0] = '\0';
            return;
        }
        used = (size_t)snprintf(out, size, "%s", home);
        ++pattern;
    }
    for (; *pattern && used + 1 < size; ++pattern) {
        if (strncmp(pattern, "{v}", 3) == 0) {
            used += (size_t)snprintf(out + used, size - used, "%s", version);
            pattern += 2;
        } else {
            out[used++] = *pattern;
        }
    }
    if (used >= size) used = 0;
    out[used] = '\0';
}

/* Where this platform's Python installs put the library ({v}: the version; ~: $HOME; glob patterns allowed). */
static const char *const INSTALLS[] = {
#ifdef __APPLE__
    "/Library/Frameworks/Python.framework/Versions/{v}/Python",
    "/opt/homebrew/opt/python@{v}/Frameworks/Python.framework/Versions/{v}/Python",
    "/usr/local/opt/python@{v}/Frameworks/Python.framework/Versions/{v}/Python",
    "/opt/local/Library/Frameworks/Python.framework/Versions/{v}/Python",
    "~/.pyenv/versions/{v}.*/lib/libpython{v}.dylib",
#endif
    NULL};

static int try_library(const char *path, int mode, Tried *tried) {
    if (!path[0]) return -1;
    if (dlopen(path, mode)) return 0; /* kept open for the life of the process */
    if (!(mode & RTLD_NOLOAD)) tried_add(tried, "%s", dlerror());
    return -1;
}

int platform_load_python(const char *version, char *error, size_t error_size, char *note, size_t note_size) {
    const char *(*get_version)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "Py_GetVersion");
    if (get_version) { /* a Python host: use its interpreter, never load a second one */
        const char *running = get_version();
        if (!version_matches(running, version))
            snprintf(note, note_size, "this FMU was built for Python %s; the host process runs Python %.20s "
                     "(it runs if that Python can execute the FMU's standard-library-only code)", version, running);
        return 0;
    }
    char candidates[8][PATH_SIZE];
    size_t count = 0;
    const char *named = getenv("MECHFMU_PYTHON");
    struct stat info;
    if (named && named[0]) {
        if (stat(named, &info) == 0 && S_ISDIR(info.st_mode))
            snprintf(candidates[count++], PATH_SIZE, "%s/%s", named, MECHFMU_LIBPYTHON_SONAME);
        else
            snprintf(candidates[count++], PATH_SIZE, "%s", named);
    }
    snprintf(candidates[count++], PATH_SIZE, "%s", MECHFMU_LIBPYTHON_PATH);
    char tried_text[8192] = "";
    Tried tried = {tried_text, sizeof tried_text};
    for (size_t i = 0; INSTALLS[i] && count < 7; ++i) {
        char pattern[PATH_SIZE];
        glob_t found;
        expand(INSTALLS[i], version, pattern, sizeof pattern);
        if (!pattern[0]) continue;
        if (glob(pattern, 0, NULL, &found) == 0 && found.gl_pathc > 0)
            snprintf(candidates[count++], PATH_SIZE, "%s", found.gl_pathv[found.gl_pathc - 1]); /* the newest */
        else
            tried_add(&tried, "%s (not there)", pattern);
        globfree(&found);
    }
    snprintf(candidates[count++], PATH_SIZE, "%s", MECHFMU_LIBPYTHON_SONAME);
    for (int load = 0; load < 2; ++load) /* first promote a library already loaded locally */
        for (size_t i = 0; i < count; ++i)
            if (try_library(candidates[i], RTLD_NOW | RTLD_GLOBAL | (load ? 0 : RTLD_NOLOAD), &tried) == 0) return 0;
#ifdef __APPLE__
    snprintf(error, error_size,
             "no Python %s runtime: this FMU runs its model in Python %s and needs its shared library (%s or a "
             "Python.framework: python.org's installer for Python %s, Homebrew's python@%s, or pyenv's built with "
             "--enable-shared; a library elsewhere can be named in the environment variable MECHFMU_PYTHON). Tried: %s",
             version, version, MECHFMU_LIBPYTHON_SONAME, version, version, tried_text);
#else
    snprintf(error, error_size,
             "no Python %s runtime: this FMU runs its model in Python %s and needs its shared library "
             "(%s, e.g. Debian's libpython%s package or any Python %s built with --enable-shared; "
             "a library elsewhere can be named in the environment variable MECHFMU_PYTHON or in LD_LIBRARY_PATH). "
             "Tried: %s", version, version, MECHFMU_LIBPYTHON_SONAME, version, version, tried_text);
#endif
    return -1;
}
#endif
#endif

uint32_t platform_crc32(const void *data, size_t size, uint32_t crc) {
    const unsigned char *p = data;
    crc = ~crc;
    for (size_t i = 0; i < size; ++i) {
        crc ^= p[i];
        for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

/* --- instances' blocks --------------------------------------------------------------------------------------------
 * Chunks of BLOCK_CHUNK bytes, aligned to their size, so a block's chunk is its address with the low bits cleared.
 * A chunk starts with its header; its blocks follow, handed out in order from the chunk being filled. A chunk is
 * released when its last block is (the one being filled is emptied for reuse instead); a block too large for a
 * chunk's quarter has a chunk of its own. Under AddressSanitizer every block has a chunk of its own, so an overflow
 * out of a block is still caught. */
#define BLOCK_CHUNK ((size_t)65536)
#define BLOCK_HEAD ((size_t)64)

typedef struct {
    size_t live; /* blocks handed out and not released */
} ChunkHead;

static platform_mutex_t blocks_lock = PLATFORM_MUTEX_INIT;
static ChunkHead *filling;     /* the chunk new blocks come from */
static size_t filling_used;    /* its bytes handed out, the header included */

#if defined(__SANITIZE_ADDRESS__)
#define BLOCKS_APART 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BLOCKS_APART 1
#endif
#endif
#ifndef BLOCKS_APART
#define BLOCKS_APART 0
#endif

static ChunkHead *chunk_new(size_t size) {
    void *memory = NULL;
#ifdef _WIN32
    memory = _aligned_malloc(size, BLOCK_CHUNK);
#else
    if (posix_memalign(&memory, BLOCK_CHUNK, size) != 0) memory = NULL;
#endif
    if (memory) ((ChunkHead *)memory)->live = 0;
    return memory;
}

static void chunk_release(ChunkHead *chunk) {
#ifdef _WIN32
    _aligned_free(chunk);
#else
    free(chunk);
#endif
}

void *platform_block_alloc(size_t size) {
    const size_t need = (size + 63) / 64 * 64;
    if (size == 0 || size > SIZE_MAX / 2) return NULL;
    if (BLOCKS_APART || need > (BLOCK_CHUNK - BLOCK_HEAD) / 4) {
        ChunkHead *own = chunk_new(BLOCK_HEAD + need);
        if (!own) return NULL;
        own->live = 1;
        return memset((char *)own + BLOCK_HEAD, 0, need);
    }
    platform_lock(&blocks_lock);
    if (!filling || filling_used + need > BLOCK_CHUNK) {
        ChunkHead *fresh = chunk_new(BLOCK_CHUNK);
        if (!fresh) {
            platform_unlock(&blocks_lock);
            return NULL;
        }
        if (filling && filling->live == 0) chunk_release(filling);
        filling = fresh, filling_used = BLOCK_HEAD;
    }
    char *block = (char *)filling + filling_used;
    filling_used += need;
    filling->live += 1;
    platform_unlock(&blocks_lock);
    return memset(block, 0, need);
}

void platform_block_free(void *block) {
    if (!block) return;
    ChunkHead *chunk = (ChunkHead *)((uintptr_t)block & ~(uintptr_t)(BLOCK_CHUNK - 1));
    platform_lock(&blocks_lock);
    if (--chunk->live == 0) {
        if (chunk == filling) filling_used = BLOCK_HEAD;
        else chunk_release(chunk);
    }
    platform_unlock(&blocks_lock);
}

#if defined(__GNUC__) || defined(__clang__)
/* When the library unloads with no block left, the chunk being filled goes with it (a host that loads and unloads
 * the FMU for every instance would otherwise lose one per load). */
__attribute__((destructor)) static void release_blocks(void) {
    if (filling && filling->live == 0) chunk_release(filling);
    filling = NULL;
}
#endif
